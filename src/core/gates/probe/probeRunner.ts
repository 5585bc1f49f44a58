import { existsSync, promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { GateRunner, GateRunRequest, GateRunResult, TestLocation } from '../types';

/** The folder the test probe writes its records to (`testProbe.ts`). */
export const TEST_PROBE_DIR_ENV = 'RALPH_TEST_PROBE_DIR';

/**
 * The variables Ralph sets (or extends) for one gate run only: the probe's folder, and
 * NODE_OPTIONS, to which the probe's `--require` is appended (`GateRunRequest.env` and
 * `appendEnv`). They change with every run and say nothing about what the gate checks, so a
 * cache keyed on a run's environment leaves these entries of `env` and `appendEnv` out.
 */
export const RALPH_RUN_ENV: readonly string[] = [TEST_PROBE_DIR_ENV, 'NODE_OPTIONS'];

/** What one run's records may add up to; a probe that wrote more is not read (the run's names stay without files). */
const MAX_RECORD_BYTES = 32 * 1024 * 1024;

/**
 * Runs each gate with the test probe preloaded into its node processes and returns where the
 * runner said each test is defined (`GateRunResult.testLocations`). Per run: a private folder
 * (writable inside the sandbox too) holding a copy of the probe and its records, removed after
 * the run. A result that already carries locations (taken from a cache) is returned as it is.
 * Without the probe's program (an unusual packaging) runs go on without it.
 */
export class ProbingGateRunner implements GateRunner {
  constructor(
    private readonly inner: GateRunner,
    private readonly probeSource: () => string | undefined = testProbeSource,
  ) {}

  /** The environment the gate's command sees, without the probe's per-run variables (the run cache keys on it). */
  environment(request: GateRunRequest): Promise<string | undefined> {
    return this.inner.environment?.(request) ?? Promise.resolve(undefined);
  }

  async run(request: GateRunRequest): Promise<GateRunResult> {
    const dir = await this.prepare();
    if (!dir) return this.inner.run(request);
    try {
      const result = await this.inner.run(probedRequest(request, dir));
      if (result.testLocations) return result;
      const testLocations = await readTestLocations(dir, request.cwd);
      return testLocations.length > 0 ? { ...result, testLocations } : result;
    } finally {
      await fs.rm(dir, { recursive: true, force: true }).catch(() => {});
    }
  }

  /** The run's folder with the probe in it; undefined when there is no probe to give. */
  private async prepare(): Promise<string | undefined> {
    const source = this.probeSource();
    if (source === undefined) return undefined;
    let dir: string | undefined;
    try {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-probe-'));
      await fs.mkdir(path.join(dir, 'records'));
      await fs.writeFile(path.join(dir, PROBE_FILE), source);
      return dir;
    } catch {
      if (dir) await fs.rm(dir, { recursive: true, force: true }).catch(() => {});
      return undefined;
    }
  }
}

/** The probe's copy in the run's folder: `.cjs`, so a `"type": "module"` above it changes nothing. */
const PROBE_FILE = 'probe.cjs';

/** `request` with the probe preloaded and its records' folder writable. */
export function probedRequest(request: GateRunRequest, dir: string): GateRunRequest {
  return {
    ...request,
    env: { ...request.env, [TEST_PROBE_DIR_ENV]: path.join(dir, 'records') },
    appendEnv: { ...request.appendEnv, NODE_OPTIONS: `--require ${nodeOptionsQuoted(path.join(dir, PROBE_FILE))}` },
    writableDirs: [...(request.writableDirs ?? []), dir],
  };
}

/** A path in NODE_OPTIONS: double quotes, with `\` and `"` escaped (node's own quoting there). */
export function nodeOptionsQuoted(file: string): string {
  return `"${file.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * The records of a run as locations: one per test name whose records name one file (a name in
 * two files says nothing), relative to `cwd` when inside it. Lines that are not records are
 * skipped; a folder over the size limit gives none.
 */
export async function readTestLocations(dir: string, cwd: string): Promise<TestLocation[]> {
  const records = path.join(dir, 'records');
  const names = (await fs.readdir(records).catch(() => [] as string[])).filter((n) => n.endsWith('.ndjson')).sort();
  const files = new Map<string, Set<string>>();
  let bytes = 0;
  for (const name of names) {
    const text = await fs.readFile(path.join(records, name), 'utf8').catch(() => '');
    bytes += text.length;
    if (bytes > MAX_RECORD_BYTES) return [];
    for (const line of text.split('\n')) {
      const record = parseRecord(line);
      if (!record) continue;
      const seen = files.get(record.name) ?? new Set<string>();
      seen.add(record.file);
      files.set(record.name, seen);
    }
  }
  const out: TestLocation[] = [];
  for (const [name, where] of files) if (where.size === 1) out.push({ name, file: shownPath([...where][0], cwd) });
  return out;
}

function parseRecord(line: string): TestLocation | undefined {
  if (!line.trim()) return undefined;
  try {
    const value = JSON.parse(line) as { name?: unknown; file?: unknown };
    return typeof value.name === 'string' && typeof value.file === 'string' && value.file
      ? { name: value.name, file: value.file }
      : undefined;
  } catch {
    return undefined;
  }
}

function shownPath(file: string, cwd: string): string {
  const rel = path.relative(cwd, file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel.split(path.sep).join('/') : file;
}

let cached: { source: string | undefined } | undefined;

/**
 * The probe's program, read once: `testProbe.js` beside this module — `dist/testProbe.js` in the
 * bundles and the packaged extension, the compiled `testProbe.js` next to this file in `out/`.
 */
export function testProbeSource(): string | undefined {
  if (cached) return cached.source;
  const file = path.join(__dirname, 'testProbe.js');
  // its source map stays behind: the copy runs from the run's folder
  cached = { source: existsSync(file) ? readFileSync(file, 'utf8').replace(/\n\/\/# sourceMappingURL=\S*\s*$/, '\n') : undefined };
  return cached.source;
}
