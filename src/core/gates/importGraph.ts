import { builtinModules } from 'node:module';
import { promises as fs, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { type FileImports, importsOf, languageOf, runsProgram } from './importSpecifiers';

/**
 * What a test exercises: the files its test file imports within the repository, followed
 * transitively. Unknown — the test then exercises everything — when a file on the way names a
 * module by a computed value, is code of a language whose imports are not read, imports a
 * relative path that is not there (a build output not built yet), a file git ignores (a build
 * output: its source is elsewhere), or a bare name that is neither a dependency, a built-in nor
 * an alias the project declares. A larger closure only holds more failures against the task;
 * a smaller one could forgive the task's own failing test, so every doubt makes it unknown.
 */

export interface Closure {
  /** Repository-relative files reached, the start file first. */
  files: string[];
  /** Why what the start file exercises cannot be told, when it cannot. */
  unknown?: string;
}

/** Past this many files a closure is not followed further (unknown). */
const MAX_FILES = 20_000;
const JS_CANDIDATE_EXT = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs', '.json', '.vue', '.svelte'];
const TS_FOR_JS: Record<string, string[]> = { '.js': ['.ts', '.tsx'], '.jsx': ['.tsx'], '.mjs': ['.mts'], '.cjs': ['.cts'] };
const BUILTINS = new Set(builtinModules);

/** Parsed imports by absolute path, size and mtime: a file read once per content across a run. */
const parsed = new Map<string, FileImports>();
const MAX_PARSED = 20_000;

export class ImportGraph {
  private readonly closures = new Map<string, Promise<Closure>>();
  private aliases?: Promise<Alias[]>;
  private ownPackage?: Promise<{ name?: string; entry?: string }>;

  /**
   * `files`: the repository's files as git sees them (tracked, and untracked ones not ignored);
   * a file on disk outside it is ignored by git.
   */
  constructor(
    private readonly root: string,
    private readonly files: ReadonlySet<string>,
  ) {}

  /** The closure of `file` (repository-relative). */
  closure(file: string): Promise<Closure> {
    let known = this.closures.get(file);
    if (!known) this.closures.set(file, (known = this.follow(file)));
    return known;
  }

  private async follow(start: string): Promise<Closure> {
    const seen = new Set<string>([start]);
    const queue = [start];
    while (queue.length > 0) {
      const file = queue.shift()!;
      const language = languageOf(file);
      if (language === 'leaf') continue;
      if (language === 'opaque') return unknown(seen, `\`${file}\` is code whose imports Ralph does not read`);
      const imports = await this.importsIn(file);
      if (!imports) return unknown(seen, `\`${file}\` could not be read`);
      if (imports.runsProgram && file === start) return unknown(seen, `\`${file}\` starts another program, whose imports are not followed`);
      // a Go file is part of its package: the package's other files are exercised with it
      const siblings = language === 'go' ? this.goPackageFiles(path.posix.dirname(file)) : [];
      if (imports.unknown) return unknown(seen, `\`${file}\` imports ${imports.unknown}`);
      const found: string[][] = [siblings];
      for (const specifier of imports.specifiers) {
        const resolved = await this.resolve(file, language, specifier);
        if (resolved.kind === 'unknown') return unknown(seen, `\`${file}\` imports \`${specifier}\`, ${resolved.why}`);
        found.push(resolved.files);
      }
      for (const files of found) {
        for (const next of files) {
          if (seen.has(next)) continue;
          seen.add(next);
          queue.push(next);
        }
      }
      if (seen.size > MAX_FILES) return unknown(seen, `it reaches more than ${MAX_FILES} files`);
    }
    return { files: [...seen] };
  }

  private async importsIn(file: string): Promise<FileImports | undefined> {
    const abs = path.join(this.root, file);
    const stat = await fs.stat(abs).catch(() => undefined);
    if (!stat?.isFile()) return undefined;
    const key = `${abs}\0${stat.size}\0${stat.mtimeMs}`;
    const known = parsed.get(key);
    if (known) return known;
    const text = await fs.readFile(abs, 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    const language = languageOf(file);
    const read = language === 'js' || language === 'python' || language === 'go' ? importsOf(language, text) : { specifiers: [] };
    const imports = language === 'js' && runsProgram(text) ? { ...read, runsProgram: true } : read;
    if (parsed.size >= MAX_PARSED) parsed.delete(parsed.keys().next().value as string);
    parsed.set(key, imports);
    return imports;
  }

  private async resolve(from: string, language: 'js' | 'python' | 'go', specifier: string): Promise<Resolved> {
    if (language === 'python') return this.resolvePython(from, specifier);
    if (language === 'go') return this.resolveGo(specifier);
    return this.resolveJs(from, specifier);
  }

  private async resolveJs(from: string, specifier: string): Promise<Resolved> {
    const clean = specifier.replace(/[?#].*$/, '');
    if (clean.startsWith('.') || clean.startsWith('/')) {
      if (clean.startsWith('/')) return { kind: 'unknown', why: 'an absolute path' };
      return this.jsFile(path.posix.join(path.posix.dirname(from), clean), specifier);
    }
    if (clean.startsWith('node:') || BUILTINS.has(clean) || BUILTINS.has(clean.split('/')[0])) return NONE;
    for (const alias of await (this.aliases ??= readAliases(this.root))) {
      const target = alias.match(clean);
      if (target !== undefined) return this.jsFile(target, specifier);
    }
    const own = await (this.ownPackage ??= readOwnPackage(this.root));
    if (own.name && (clean === own.name || clean.startsWith(`${own.name}/`))) {
      const sub = clean.slice(own.name.length).replace(/^\//, '');
      return this.jsFile(sub ? sub : (own.entry ?? 'index'), specifier);
    }
    return this.dependency(clean);
  }

  /** A bare name: a dependency outside the repository, a workspace package inside it, or unknown. */
  private async dependency(specifier: string): Promise<Resolved> {
    const parts = specifier.split('/');
    const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
    for (let dir = this.root; ; dir = path.dirname(dir)) {
      const candidate = path.join(dir, 'node_modules', name);
      if (await exists(candidate)) {
        let real = candidate;
        try {
          real = realpathSync(candidate);
        } catch {
          // a broken link: a dependency all the same
        }
        const rel = path.relative(this.root, real).replace(/\\/g, '/');
        // a workspace package linked into node_modules is the repository's own code
        if (rel.startsWith('..') || path.isAbsolute(rel) || rel.split('/').includes('node_modules')) return NONE;
        const sub = specifier.slice(name.length).replace(/^\//, '');
        return this.jsFile(sub ? `${rel}/${sub}` : rel, specifier);
      }
      if (path.dirname(dir) === dir) break;
    }
    return { kind: 'unknown', why: 'which is neither a dependency, a built-in module nor a path alias of tsconfig.json' };
  }

  /** The repository file a JavaScript/TypeScript path names (with the extensions and index files the resolvers try). */
  private async jsFile(target: string, specifier: string): Promise<Resolved> {
    const base = path.posix.normalize(target).replace(/^\.\//, '').replace(/\/$/, '');
    if (base.startsWith('..')) return { kind: 'unknown', why: 'which is outside the repository' };
    const ext = path.posix.extname(base);
    const candidates = [
      base,
      ...(TS_FOR_JS[ext] ?? []).map((e) => base.slice(0, -ext.length) + e),
      ...JS_CANDIDATE_EXT.map((e) => base + e),
      ...JS_CANDIDATE_EXT.map((e) => `${base}/index${e}`),
    ];
    for (const c of candidates) if (this.files.has(c)) return { kind: 'files', files: [c] };
    const pkgMain = await packageEntry(path.join(this.root, base));
    if (pkgMain) return this.jsFile(path.posix.join(base, pkgMain), specifier);
    for (const c of candidates) {
      const stat = await fs.stat(path.join(this.root, c)).catch(() => undefined);
      if (stat?.isFile()) return { kind: 'unknown', why: `which resolves to \`${c}\`, a file git ignores (a build output?)` };
    }
    return { kind: 'unknown', why: 'which is not there (not built yet?)' };
  }

  private async resolvePython(from: string, specifier: string): Promise<Resolved> {
    let parts: string[];
    if (specifier.startsWith('.')) {
      const dots = /^\.+/.exec(specifier)![0].length;
      const dir = path.posix
        .dirname(from)
        .split('/')
        .filter((p) => p !== '.');
      parts = [...dir.slice(0, dir.length - (dots - 1)), ...specifier.slice(dots).split('.').filter(Boolean)];
    } else parts = specifier.split('.');
    const stem = parts.join('/');
    for (const prefix of ['', 'src/', 'lib/']) {
      for (const c of [`${prefix}${stem}.py`, `${prefix}${stem}/__init__.py`]) if (this.files.has(c)) return { kind: 'files', files: [c] };
    }
    // not in the repository: the standard library or an installed package (a name imported from a module is tried too)
    return NONE;
  }

  private async resolveGo(specifier: string): Promise<Resolved> {
    const module = await readGoModule(this.root);
    if (!module || !(specifier === module || specifier.startsWith(`${module}/`))) return NONE;
    return { kind: 'files', files: this.goPackageFiles(specifier.slice(module.length).replace(/^\//, '') || '.') };
  }

  private goPackageFiles(dir: string): string[] {
    return [...this.files].filter((f) => path.posix.dirname(f) === dir && f.endsWith('.go') && !f.endsWith('_test.go'));
  }
}

type Resolved = { kind: 'files'; files: string[] } | { kind: 'unknown'; why: string };
const NONE: Resolved = { kind: 'files', files: [] };

function unknown(seen: Set<string>, why: string): Closure {
  return { files: [...seen], unknown: why };
}

async function exists(p: string): Promise<boolean> {
  return (await fs.stat(p).catch(() => undefined)) !== undefined;
}

/** A folder's package.json entry (`main`, or `exports` "."), relative to it. */
async function packageEntry(dir: string): Promise<string | undefined> {
  const text = await fs.readFile(path.join(dir, 'package.json'), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return entryOf(JSON.parse(text) as Record<string, unknown>);
  } catch {
    return undefined;
  }
}

function entryOf(pkg: Record<string, unknown>): string | undefined {
  const exported = exportTarget(pkg.exports);
  const main = typeof pkg.main === 'string' ? pkg.main : undefined;
  return exported ?? main;
}

/** The file `exports` gives for "." (a string, `{ ".": … }`, or conditions). */
function exportTarget(exports: unknown): string | undefined {
  if (typeof exports === 'string') return exports;
  if (!exports || typeof exports !== 'object') return undefined;
  const record = exports as Record<string, unknown>;
  const dot = '.' in record ? record['.'] : Object.keys(record).some((k) => k.startsWith('.')) ? undefined : record;
  if (typeof dot === 'string') return dot;
  if (!dot || typeof dot !== 'object') return undefined;
  for (const condition of ['source', 'import', 'require', 'node', 'default']) {
    const target = exportTarget((dot as Record<string, unknown>)[condition]);
    if (target) return target;
  }
  return undefined;
}

async function readOwnPackage(root: string): Promise<{ name?: string; entry?: string }> {
  const text = await fs.readFile(path.join(root, 'package.json'), 'utf8').catch(() => undefined);
  if (text === undefined) return {};
  try {
    const pkg = JSON.parse(text) as Record<string, unknown>;
    return { ...(typeof pkg.name === 'string' ? { name: pkg.name } : {}), ...(entryOf(pkg) ? { entry: entryOf(pkg) } : {}) };
  } catch {
    return {};
  }
}

/** A `compilerOptions.paths` pattern of tsconfig.json (one `*` at most), as a mapping to repository paths. */
interface Alias {
  match(specifier: string): string | undefined;
}

async function readAliases(root: string): Promise<Alias[]> {
  const aliases: Alias[] = [];
  let file: string | undefined = path.join(root, 'tsconfig.json');
  const options: { baseUrl?: string; paths?: Record<string, string[]>; dir?: string } = {};
  for (let depth = 0; file && depth < 5; depth++) {
    const text = await fs.readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined) break;
    const config = (parseJsonc(text) ?? {}) as {
      extends?: unknown;
      compilerOptions?: { baseUrl?: string; paths?: Record<string, string[]> };
    };
    const dir = path.dirname(file);
    if (options.paths === undefined && config.compilerOptions?.paths) {
      options.paths = config.compilerOptions.paths;
      options.dir = dir;
    }
    if (options.baseUrl === undefined && config.compilerOptions?.baseUrl)
      options.baseUrl = path.resolve(dir, config.compilerOptions.baseUrl);
    file = typeof config.extends === 'string' && config.extends.startsWith('.') ? path.resolve(dir, config.extends) : undefined;
  }
  const base = options.baseUrl ?? options.dir ?? root;
  for (const [pattern, targets] of Object.entries(options.paths ?? {})) {
    const target = targets[0];
    if (typeof target !== 'string') continue;
    const [prefix, suffix = ''] = pattern.split('*');
    const wild = pattern.includes('*');
    aliases.push({
      match(specifier) {
        if (wild ? !(specifier.startsWith(prefix) && specifier.endsWith(suffix)) : specifier !== pattern) return undefined;
        const star = wild ? specifier.slice(prefix.length, specifier.length - suffix.length) : '';
        return path.relative(root, path.resolve(base, target.replace('*', star))).replace(/\\/g, '/');
      },
    });
  }
  return aliases;
}

async function readGoModule(root: string): Promise<string | undefined> {
  const text = await fs.readFile(path.join(root, 'go.mod'), 'utf8').catch(() => undefined);
  return text ? /^module\s+(\S+)/m.exec(text)?.[1] : undefined;
}
