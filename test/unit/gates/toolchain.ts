import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The real JS tools the parser tests run, installed from the npm registry once into a cache
 * directory shared by every test run on the machine (and CI's, which creates it on its first
 * run). The versions are the ones the parsers (and the test probe) were checked against; all install
 * on Node 20.
 */
export const TOOL_SPECS = ['mocha@11', 'jest@29', 'vitest@3', 'typescript@5.9', 'eslint@9', 'c8@10', 'tape@5'] as const;

/** `npm install` of the tools takes a few tens of seconds; this leaves room for a slow registry. */
export const INSTALL_TIMEOUT_MS = 10 * 60_000;
/** Per run of a tool, and per test. */
export const RUN_TIMEOUT_MS = 3 * 60_000;

export interface Toolchain {
  /** The `node_modules` a fixture project links to. */
  readonly nodeModules: string;
  /** The installed version of a package, for the report. */
  version(pkg: string): string;
  /** argv (node + the package's bin script) for a tool, so no shell or `.bin` shim is involved. */
  bin(pkg: string, name?: string): string[];
}

let pending: Promise<Toolchain> | undefined;

/** The cached toolchain, installed on first use in this process (and on the machine). */
export function ensureToolchain(): Promise<Toolchain> {
  pending ??= install();
  return pending;
}

/** Mocha hook of a suite that runs the real tools: installs (or reuses) them before it; the getter gives them to its tests. */
export function useToolchain(): () => Toolchain {
  let tools: Toolchain | undefined;
  before(async function () {
    this.timeout(INSTALL_TIMEOUT_MS);
    tools = await ensureToolchain();
  });
  return () => {
    if (!tools) throw new Error('the toolchain is not installed yet');
    return tools;
  };
}

/** `RALPH_GATE_TOOLS_DIR` moves the cache (a CI cache path); the hash keeps tool sets apart. */
function cacheDir(): string {
  const key = createHash('sha256')
    .update(`${TOOL_SPECS.join(' ')} node${process.versions.node.split('.')[0]}`)
    .digest('hex')
    .slice(0, 12);
  return process.env.RALPH_GATE_TOOLS_DIR ?? path.join(os.tmpdir(), `ralph-gate-tools-${key}`);
}

async function install(): Promise<Toolchain> {
  const dir = cacheDir();
  const marker = path.join(dir, 'ready.json');
  if (!existsSync(marker)) {
    // Installed beside the cache and renamed into place, so a run that dies half-way or a
    // second test process never sees a partial install.
    const partial = `${dir}.partial-${process.pid}`;
    await fs.rm(partial, { recursive: true, force: true });
    await fs.mkdir(partial, { recursive: true });
    const npm = await runTool(
      ['npm', 'install', '--prefix', partial, '--no-audit', '--no-fund', '--loglevel=error', ...TOOL_SPECS],
      partial,
      { timeoutMs: INSTALL_TIMEOUT_MS },
    );
    if (npm.exitCode !== 0) {
      await fs.rm(partial, { recursive: true, force: true });
      throw new Error(`npm install of the gate tools failed (exit ${npm.exitCode}):\n${npm.output.slice(-3000)}`);
    }
    await fs.writeFile(path.join(partial, 'ready.json'), JSON.stringify({ specs: TOOL_SPECS, node: process.version }));
    try {
      await fs.rename(partial, dir);
    } catch (error) {
      if (!existsSync(marker)) throw error;
      await fs.rm(partial, { recursive: true, force: true }); // another process won the race
    }
  }
  const nodeModules = path.join(dir, 'node_modules');
  const manifest = (pkg: string) =>
    JSON.parse(readFileSync(path.join(nodeModules, pkg, 'package.json'), 'utf8')) as {
      version: string;
      bin?: string | Record<string, string>;
    };
  return {
    nodeModules,
    version: (pkg) => manifest(pkg).version,
    bin(pkg, name = pkg) {
      const bin = manifest(pkg).bin;
      const rel = typeof bin === 'string' ? bin : bin?.[name];
      if (!rel) throw new Error(`${pkg} has no bin named ${name}`);
      return [process.execPath, path.join(nodeModules, pkg, rel)];
    },
  };
}

export interface ToolRun {
  exitCode: number | null;
  /** stdout and stderr interleaved as a terminal would show them (both go to one file). */
  output: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  /** Sets FORCE_COLOR so the tools colour their output. */
  color?: boolean;
  timeoutMs?: number;
}

/** Runs a real tool the way a gate does: one output stream, exit code kept, never throws on failure. */
export async function runTool(argv: readonly string[], cwd: string, options: RunOptions = {}): Promise<ToolRun> {
  const outFile = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-gate-out-')), 'output.txt');
  const fd = openSync(outFile, 'w');
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Colour only when asked; and never report into a parent test runner.
  for (const key of ['FORCE_COLOR', 'NO_COLOR', 'NODE_TEST_CONTEXT', 'NODE_OPTIONS', 'MOCHA_COLORS']) delete env[key];
  if (options.color) env.FORCE_COLOR = '1';
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  try {
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(argv[0], argv.slice(1), {
        cwd,
        env,
        stdio: ['ignore', fd, fd],
        shell: process.platform === 'win32' && argv[0] === 'npm',
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? RUN_TIMEOUT_MS);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    return { exitCode, output: await fs.readFile(outFile, 'utf8') };
  } finally {
    closeSync(fd);
    await fs.rm(path.dirname(outFile), { recursive: true, force: true });
  }
}

/** Whether a command runs here (`which`, portably): `cargo --version` and the like. */
export async function hasCommand(argv: readonly string[]): Promise<boolean> {
  try {
    return (await runTool(argv, os.tmpdir(), { timeoutMs: 60_000 })).exitCode === 0;
  } catch {
    return false;
  }
}

/** Skips the running test and puts the reason in its title, where the spec reporter shows it. */
export function skipBecause(context: Mocha.Context, reason: string): never {
  if (context.test) context.test.title += ` [skipped: ${reason}]`;
  context.skip();
}
