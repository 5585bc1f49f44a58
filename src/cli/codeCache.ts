/**
 * The `ralph` CLI's V8 code cache: what makes a start cheap. The CLI is one 4 MB bundle
 * (dist/cliMain.js); compiling it took a third of every start's CPU (≈ 0.06 of 0.22 CPU-s on
 * Node 20). The launcher (launcher.ts, dist/cli.js) compiles it through `vm.Script` with the
 * code V8 made of it in an earlier start, and after a start that had none (or a verb that was
 * not in it yet) stores what V8 compiled by then — the functions the CLI ran are compiled lazily,
 * so the cache is made after the CLI has run, not when the script is compiled. One file per
 * bundle (its path, size, times and inode), Node, V8 flags and architecture, in the user's cache
 * folder; written atomically; a cache V8 rejects or that cannot be read is ignored (the bundle
 * compiles as without it) and one that cannot be written is not made. `RALPH_CODE_CACHE=off`
 * turns it off; `RALPH_CODE_CACHE=<folder>` puts it elsewhere. Node builtins only: the launcher
 * loads this before the bundle.
 */
import { isAscii } from 'node:buffer';
import * as fs from 'node:fs';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';

export const CODE_CACHE_ENV = 'RALPH_CODE_CACHE';

/** Cache files kept in the folder: one per bundle and Node; the oldest go when a new one is written. */
const KEEP_FILES = 10;
/** A temporary file this old is a write that never ended. */
const ABANDONED_AFTER_MS = 10 * 60_000;
/** A process still running after this long (`mcp`, `run`) stores its cache then: it may end by a signal, without an exit. */
const SAVE_AFTER_MS = 3000;

/**
 * The folder of the code cache, or undefined when it is off (`RALPH_CODE_CACHE` = `off`, `0`,
 * `false` or `no`). `RALPH_CODE_CACHE` = an absolute path is the folder; else `ralph-loop/code-cache`
 * under `$XDG_CACHE_HOME`, `%LOCALAPPDATA%` on Windows, `~/Library/Caches` on macOS, `~/.cache`.
 */
export function codeCacheDir(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
  home = os.homedir(),
): string | undefined {
  const setting = env[CODE_CACHE_ENV]?.trim();
  if (setting && /^(off|0|false|no)$/i.test(setting)) return undefined;
  if (setting && path.isAbsolute(setting)) return setting;
  const base =
    env.XDG_CACHE_HOME ||
    (platform === 'win32' ? env.LOCALAPPDATA : undefined) ||
    (platform === 'darwin' ? path.join(home, 'Library', 'Caches') : path.join(home, '.cache'));
  return path.join(base, 'ralph-loop', 'code-cache');
}

/** The family of the verb `argv` starts with (`task`, `run`, `mcp`, `--version`): what a cache file says it has seen. */
export function verbFamily(argv: readonly string[]): string {
  return argv.find((a) => !a.startsWith('-')) ?? argv[0] ?? '';
}

/** 32-bit FNV-1a of `text`, in base 36: a short, stable part of a file name. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash.toString(36);
}

/**
 * The cache file's name for `file` as it is now: a rebuilt, reinstalled or copied bundle has
 * another (its times, size or inode differ); so does another Node, V8, architecture or set of
 * V8 options (V8 rejects a cache made under other flags).
 */
export function cacheFileName(file: string, stat: fs.Stats, env: NodeJS.ProcessEnv = process.env): string {
  const identity = [file, stat.dev, stat.ino, stat.size, stat.mtimeMs, stat.ctimeMs].join('|');
  const flags = [...process.execArgv, env.NODE_OPTIONS ?? ''].join(' ');
  return `cli-${process.versions.v8}-${process.arch}-${shortHash(identity)}${shortHash(flags)}.bin`;
}

interface CacheFile {
  verbs: string[];
  data: Buffer;
}

/** The cache file: a JSON line (the verbs run when it was made), then V8's data. Undefined when missing or unreadable. */
function readCacheFile(file: string): CacheFile | undefined {
  try {
    const buffer = fs.readFileSync(file);
    const end = buffer.indexOf(10);
    if (end < 0) return undefined;
    const header = JSON.parse(buffer.subarray(0, end).toString('utf8')) as { verbs?: unknown };
    const verbs = Array.isArray(header.verbs) ? header.verbs.filter((v): v is string => typeof v === 'string') : [];
    return { verbs, data: buffer.subarray(end + 1) };
  } catch {
    return undefined;
  }
}

/** The bundle's source as V8 reads it (one byte a character when it is ASCII, as a minified bundle is). */
function readSource(file: string): string {
  const buffer = fs.readFileSync(file);
  const text = isAscii(buffer) ? buffer.toString('latin1') : buffer.toString('utf8');
  // a `#!` line is only valid at the start of a script: a comment of the same length keeps every position
  return text.startsWith('#!') ? `//${text.slice(2)}` : text;
}

/**
 * Writes `make()`'s data to `file` atomically (a temporary file, then a rename); nothing when the
 * folder cannot be written (checked before the data is made, so an unwritable cache costs a
 * failed open, not a serialization). Never throws.
 */
function writeCacheFile(file: string, verbs: readonly string[], make: () => Buffer): void {
  const temp = `${file}.${process.pid}.tmp`;
  let fd: number | undefined;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fd = fs.openSync(temp, 'w');
    fs.writeSync(fd, `${JSON.stringify({ verbs })}\n`);
    fs.writeSync(fd, make());
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(temp, file);
    pruneCacheFolder(path.dirname(file), file);
  } catch {
    try {
      if (fd !== undefined) fs.closeSync(fd);
      fs.rmSync(temp, { force: true });
    } catch {
      // no folder to write in (a file in its place): nothing was written
    }
  }
}

/**
 * Keeps the newest `KEEP_FILES` cache files (older bundles' and Nodes') and removes the temporary
 * files of writes that never ended (a process killed while writing); never throws.
 */
function pruneCacheFolder(dir: string, keep: string): void {
  try {
    const files = fs
      .readdirSync(dir)
      .filter((name) => name.startsWith('cli-'))
      .map((name) => path.join(dir, name))
      .filter((file) => file !== keep)
      .map((file) => ({ file, mtime: fs.statSync(file).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime);
    const caches = files.filter(({ file }) => file.endsWith('.bin'));
    const abandoned = files.filter(({ file, mtime }) => file.endsWith('.tmp') && Date.now() - mtime > ABANDONED_AFTER_MS);
    for (const { file } of [...caches.slice(KEEP_FILES - 1), ...abandoned]) fs.rmSync(file, { force: true });
  } catch {
    // another process pruned or wrote at the same time: the next write prunes again
  }
}

export interface CompiledBundle {
  /** Runs the bundle's top level as a CommonJS module; returns its exports. */
  run(): unknown;
  /** Whether V8 took the cached code (false: compiled from source). */
  cacheUsed: boolean;
}

/**
 * `file` (a CommonJS bundle) compiled with the code cache in `dir`, for the verb family `verb`;
 * the cache is stored when the process exits (or after `SAVE_AFTER_MS`) if it had none, V8
 * rejected it, or it did not cover `verb`. Throws only before anything of the bundle has run
 * (the caller then loads it with `require`).
 */
export function compileWithCodeCache(file: string, dir: string, verb: string): CompiledBundle {
  const source = readSource(file);
  const cacheFile = path.join(dir, cacheFileName(file, fs.statSync(file)));
  const cached = readCacheFile(cacheFile);
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    ...(cached ? { cachedData: cached.data } : {}),
  });
  const cacheUsed = cached !== undefined && script.cachedDataRejected === false;
  if (!cacheUsed || !cached.verbs.includes(verb)) {
    const verbs = cacheUsed ? [...cached.verbs, verb] : [verb];
    let saved = false;
    const save = () => {
      if (saved) return;
      saved = true;
      writeCacheFile(cacheFile, verbs, () => script.createCachedData());
    };
    process.once('exit', save);
    setTimeout(save, SAVE_AFTER_MS).unref();
  }
  return { cacheUsed, run: () => runAsModule(script, file) };
}

/** What `require(file)` would do with the compiled wrapper: a module of its own, its `require`, `__filename`, `__dirname`. */
function runAsModule(script: vm.Script, file: string): unknown {
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  const dir = path.dirname(file);
  const bundle = new Module(file, require.main);
  bundle.filename = file;
  bundle.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(dir);
  require.cache[file] = bundle;
  wrapper.call(bundle.exports, bundle.exports, Module.createRequire(file), bundle, file, dir);
  bundle.loaded = true;
  return bundle.exports;
}
