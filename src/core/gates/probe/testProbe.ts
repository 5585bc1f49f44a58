/**
 * The test probe: preloaded (`--require` through NODE_OPTIONS) into every node process of a gate
 * run, it asks the test runner itself where each test is defined — what the runner's reporter
 * does not print (mocha's spec reporter, tape) — and writes one NDJSON record per test,
 * `{runner, name, file, status}`, into `$RALPH_TEST_PROBE_DIR/<pid>-<thread>.ndjson`.
 *
 * - mocha: its `Runner` (caught when mocha requires it) is watched; a test's name is its
 *   `fullTitle()` (what the spec reporter prints), its file mocha's own `test.file`.
 * - tape: its `Results` (caught the same way) is watched; a test's file is the file tape was
 *   loading when the test was registered (`callerFile`), its name the `# name` line tape
 *   prints, made distinct as the parser does.
 *
 * Built to be harmless: without the variable it does nothing; otherwise it only wraps
 * `Module._load` and looks at what comes back, every hook in try/catch, records kept in memory
 * and written at the run's end (and at the process's exit). CommonJS runners only: ESM test
 * files are seen (mocha and tape load them), an ESM runner (ava, vitest) is not. Node built-ins
 * only — it runs inside the project's processes, with their node.
 */
import * as fs from 'node:fs';
import Module from 'node:module';
import * as path from 'node:path';

const DIR_ENV = 'RALPH_TEST_PROBE_DIR';

interface ProbeRecord {
  runner: 'mocha' | 'tape';
  name: string;
  file: string;
  status: 'pass' | 'fail' | 'skip';
}

type Listener = (...args: unknown[]) => void;
interface Emitter {
  on(event: string, listener: Listener): unknown;
}

/** Records kept in memory and appended to this process's (and thread's) file at the end. */
class Recorder {
  private pending: string[] = [];
  private hooked = false;

  constructor(private readonly dir: string) {}

  add(record: ProbeRecord): void {
    this.pending.push(JSON.stringify(record));
    if (!this.hooked) {
      this.hooked = true;
      // first among the listeners: tape's own calls process.exit() inside it, which ends the rest
      process.prependListener('exit', () => this.flush());
    }
    if (this.pending.length >= 500) this.flush();
  }

  flush(): void {
    if (this.pending.length === 0) return;
    const text = `${this.pending.join('\n')}\n`;
    this.pending = [];
    try {
      // loaded here, not at start: a process that records nothing pays nothing for it
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { threadId } = require('node:worker_threads') as { threadId: number };
      fs.appendFileSync(path.join(this.dir, `${process.pid}-${threadId}.ndjson`), text);
    } catch {
      // a probe that cannot write says nothing: the run itself must not notice
    }
  }
}

const PATCHED = Symbol.for('ralph.testProbe');

type Ctor = { name?: string; prototype: Record<string, unknown> } & Record<symbol, unknown>;

/** Wraps `Module._load`: each module a process requires is looked at once it is loaded. */
function install(): void {
  const dir = process.env[DIR_ENV];
  if (!dir) return;
  const loader = Module as unknown as { _load?: (...args: unknown[]) => unknown };
  const original = loader._load;
  if (typeof original !== 'function' || (original as unknown as Record<symbol, unknown>)[PATCHED]) return;
  const recorder = new Recorder(dir);
  const wrapped = function (this: unknown, ...args: unknown[]): unknown {
    const loaded = original.apply(this, args);
    if (typeof loaded === 'function') {
      try {
        inspect(loaded as unknown as Ctor, recorder);
      } catch {
        // never in the way of a require
      }
    }
    return loaded;
  };
  (wrapped as unknown as Record<symbol, unknown>)[PATCHED] = true;
  loader._load = wrapped;
}

function inspect(loaded: Ctor, recorder: Recorder): void {
  if (loaded[PATCHED]) return;
  const proto = loaded.prototype;
  if (!proto) return;
  if (loaded.name === 'Runner' && typeof proto.runTests === 'function' && typeof proto.run === 'function') {
    loaded[PATCHED] = true;
    wrapMethod(proto, 'run', (runner) => watchMocha(runner as Emitter, recorder));
  } else if (loaded.name === 'Results' && typeof proto.push === 'function' && typeof proto._watch === 'function') {
    loaded[PATCHED] = true;
    wrapMethod(proto, 'push', (results, test) => watchTape(test as TapeTest, results as object, callerFile(), recorder));
  }
}

/** `proto[method]` calls `before(this, ...args)` first (its errors swallowed), then itself. */
function wrapMethod(proto: Record<string, unknown>, method: string, before: (self: unknown, ...args: unknown[]) => void): void {
  const original = proto[method] as (...args: unknown[]) => unknown;
  proto[method] = function (this: unknown, ...args: unknown[]): unknown {
    try {
      before(this, ...args);
    } catch {
      // the runner runs as if the probe were not there
    }
    return original.apply(this, args);
  };
}

interface MochaRunnable {
  fullTitle?(): string;
  file?: string;
  parent?: { file?: string };
}

function watchMocha(runner: Emitter, recorder: Recorder): void {
  const record = (status: ProbeRecord['status']) => (runnable: unknown) => {
    try {
      const r = runnable as MochaRunnable;
      const name = typeof r.fullTitle === 'function' ? r.fullTitle() : undefined;
      const file = r.file ?? r.parent?.file;
      if (typeof name === 'string' && typeof file === 'string') recorder.add({ runner: 'mocha', name, file, status });
    } catch {
      // a runnable of another shape: nothing to say about it
    }
  };
  runner.on('pass', record('pass'));
  runner.on('fail', record('fail'));
  runner.on('pending', record('skip'));
  runner.on('end', () => recorder.flush());
}

interface TapeTest extends Emitter {
  name?: unknown;
  _todo?: unknown;
  once?(event: string, listener: Listener): unknown;
}

/** Per tape `Results` (one TAP stream): the names given so far, as the parser counts them (`DistinctNames`). */
const tapeNames = new WeakMap<object, Map<string, number>>();
/** Tests begun and not ended: a test that threw ends the process, and fails. */
const running = new Set<{ name: string; file: string; failed: boolean }>();
let exitHooked = false;

function watchTape(test: TapeTest, results: object, file: string | undefined, recorder: Recorder): void {
  if (!test || typeof test.on !== 'function') return;
  let seen = tapeNames.get(results);
  if (!seen) tapeNames.set(results, (seen = new Map()));
  const names = seen;
  let entry: { name: string; file: string; failed: boolean } | undefined;
  test.on('prerun', () => {
    const name = distinctName(names, tapeName(test.name));
    if (!file) return;
    entry = { name, file, failed: false };
    if (!exitHooked) {
      exitHooked = true;
      process.prependOnceListener('exit', () => endRunning(recorder));
      const done = results as Partial<Emitter>;
      if (typeof done.on === 'function') done.on('done', () => recorder.flush());
    }
    running.add(entry);
  });
  test.on('result', (result: unknown) => {
    // a comment (`t.comment`) prints a `# line` the parser counts like a test's: so is it here
    if (typeof result === 'string') distinctName(names, tapeName(result));
    else if (entry && result && typeof result === 'object') {
      const r = result as { ok?: unknown; todo?: unknown; skip?: unknown };
      if (!r.ok && !r.todo && !r.skip) entry.failed = true;
    }
  });
  test.on('test', (sub: unknown) => watchTape(sub as TapeTest, results, callerFile() ?? file, recorder));
  test.on('end', () => {
    if (!entry) return;
    running.delete(entry);
    recorder.add({ runner: 'tape', name: entry.name, file: entry.file, status: test._todo ? 'skip' : entry.failed ? 'fail' : 'pass' });
  });
}

function endRunning(recorder: Recorder): void {
  for (const e of running) recorder.add({ runner: 'tape', name: e.name, file: e.file, status: 'fail' });
  running.clear();
  recorder.flush();
}

/** The name as tape prints it on its `# name` line and the parser reads it back (whitespace runs as one space, no `SKIP `/`TODO `). */
function tapeName(raw: unknown): string {
  return String(raw)
    .replace(/\s+/g, ' ')
    .trimEnd()
    .replace(/^(?:SKIP|TODO) /, '');
}

/** The parser's `DistinctNames`, to the letter: the k-th repeat of a name is `name (k)`. */
function distinctName(seen: Map<string, number>, raw: string): string {
  const count = seen.get(raw);
  if (count === undefined) {
    seen.set(raw, 1);
    return raw;
  }
  let n = count;
  let candidate: string;
  do candidate = `${raw} (${++n})`;
  while (seen.has(candidate));
  seen.set(raw, n);
  seen.set(candidate, 1);
  return candidate;
}

/**
 * The file the runner was loading when the test was registered: the first frames of the stack in
 * the project (not node's, not a dependency's, not this file's) are the code that called `test()`
 * — a helper, then the test file whose top-level code called the helper — and the last of them is
 * that test file (CommonJS or ESM alike; a test file another one requires is the one running).
 */
function callerFile(): string | undefined {
  const prepare = Error.prepareStackTrace;
  const limit = Error.stackTraceLimit;
  try {
    Error.stackTraceLimit = 50;
    Error.prepareStackTrace = (_error, sites) => sites;
    const holder: { stack?: unknown } = {};
    Error.captureStackTrace(holder, callerFile);
    let found: string | undefined;
    for (const site of (holder.stack as NodeJS.CallSite[] | undefined) ?? []) {
      const file = projectFile(site.getFileName());
      if (file) found = file;
      else if (found) break;
    }
    return found;
  } catch {
    return undefined;
  } finally {
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = limit;
  }
}

function projectFile(name: string | null | undefined): string | undefined {
  if (!name) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when a test is registered
  const file = name.startsWith('file://') ? (require('node:url') as { fileURLToPath(u: string): string }).fileURLToPath(name) : name;
  if (!path.isAbsolute(file) || file === __filename || /[\\/]node_modules[\\/]/.test(file)) return undefined;
  return file;
}

try {
  install();
} catch {
  // a probe that cannot install is a run without locations, never a broken one
}
