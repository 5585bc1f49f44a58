import type { ImportGraph } from './importGraph';
import type { TestFileMatcher } from './testFiles';

/**
 * Whether a test that failed at the base and still fails is the task's: by evidence, never by
 * words of the task matched against test names. It is the task's by default; it is forgiven —
 * named pre-existing — only when a person said so (`knownFailures`), or when everything says it
 * is unrelated: the runner reported the file that defines it, what that file imports can all be
 * read, none of it is a file the task changed or a file the task's words name, the task changed
 * source files, and the promise does not ask for the whole suite to pass.
 */

/** What the task did and said, as evidence. */
export interface TaskChange {
  /** Repository-relative files the task changed against its base (`.ralph/` left out). */
  changed: ReadonlySet<string>;
  /** Repository files the task's words name (`src/parse.js`, `parse.js`, a folder). */
  named: ReadonlySet<string>;
  /** The task changed at least one source file (not a test file, a document or Ralph's own). */
  changedSource: boolean;
  /** The promise asks for the whole suite to pass. */
  wholeSuite: boolean;
}

/** Tests a person declared unrelated: a gate's `knownFailures` and the task's. */
export interface KnownFailures {
  gate: readonly string[];
  task: readonly string[];
}

/** One failing test that also failed at the base: held against the task or forgiven, and why. */
export interface FailureVerdict {
  name: string;
  held: boolean;
  /** The evidence in one clause: `it imports \`src/parse.js\`, which the task changed`. */
  why: string;
}

export type FailureJudge = (failure: { name: string; file?: string }) => Promise<FailureVerdict>;

/** Past this many files the evidence lists a few and counts the rest. */
const SHOWN = 3;

/** The judge of one gate's failures that also failed at the base. */
export function failureJudge(change: TaskChange, graph: ImportGraph | undefined, known: KnownFailures): FailureJudge {
  return async (failure) => {
    const name = failure.name;
    if (matchesKnown(name, known.task))
      return { name, held: false, why: "a person declared it unrelated to this task (the task's knownFailures)" };
    if (matchesKnown(name, known.gate))
      return { name, held: false, why: "a person declared it a known failure (the gate's knownFailures)" };
    if (!failure.file)
      return { name, held: true, why: 'the runner does not report which file defines it, so what it exercises cannot be told' };
    if (!graph) return { name, held: true, why: 'what its test file imports could not be read' };
    const closure = await graph.closure(failure.file);
    if (closure.unknown) return { name, held: true, why: `what it exercises cannot be told: ${closure.unknown}` };
    const touched = closure.files.filter((f) => change.changed.has(f));
    if (touched.length > 0) return { name, held: true, why: touchedWhy(failure.file, touched, 'the task changed') };
    const named = closure.files.filter((f) => change.named.has(f));
    if (named.length > 0) return { name, held: true, why: touchedWhy(failure.file, named, "the task's words name") };
    if (!change.changedSource) return { name, held: true, why: 'the task has changed no source file, so nothing shows it is unrelated' };
    if (change.wholeSuite) return { name, held: true, why: 'the promise asks for the whole suite to pass' };
    return { name, held: false, why: `it exercises only ${listed(closure.files)}, none of which the task changed or names` };
  };
}

function touchedWhy(testFile: string, files: readonly string[], what: string): string {
  if (files.length === 1 && files[0] === testFile) return `its test file \`${testFile}\` is one ${what}`;
  const others = files.filter((f) => f !== testFile);
  return `\`${testFile}\` imports ${listed(others)}, which ${what}`;
}

function listed(files: readonly string[]): string {
  const shown = files
    .slice(0, SHOWN)
    .map((f) => `\`${f}\``)
    .join(', ');
  return files.length > SHOWN ? `${shown} and ${files.length - SHOWN} more` : shown;
}

/** A known failure by its exact name, or a pattern with `*` standing for any text. */
export function matchesKnown(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) =>
    p.includes('*') ? new RegExp(`^${p.split('*').map(escapeRegExp).join('[\\s\\S]*')}$`).test(name) : p === name,
  );
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Files that are no source: documents, licences, lockfiles, Ralph's own. */
const NOT_SOURCE =
  /(?:^|\/)(?:[^/]+\.(?:md|markdown|mdx|txt|rst|adoc|org)|LICEN[CS]E[^/]*|COPYING[^/]*|CHANGELOG[^/]*|AUTHORS[^/]*|package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|Cargo\.lock|poetry\.lock|go\.sum)$|^\.ralph\//i;

const DOCUMENT = /(?:^|\/)[^/]+\.(?:md|markdown|mdx|txt|rst|adoc|org)$/i;

/**
 * Whether `file` is the task's source: not a test file (by the runners' conventions and configs,
 * or a file a runner reported tests in), not Ralph's own, not a lockfile or licence — and not a
 * document, unless the task is a documentation task (`type: docs`), whose work is its documents.
 */
export function isSourceFile(file: string, isTest: TestFileMatcher, testFiles: ReadonlySet<string> = new Set(), docsTask = false): boolean {
  if (isTest(file) || testFiles.has(file)) return false;
  return !NOT_SOURCE.test(file) || (docsTask && DOCUMENT.test(file));
}

/**
 * The repository files the task's words name: a path as written (`src/parse.js`), a file name
 * (`parse.js`: every file of that name) or a folder (`src/parser/`: every file under it). Only
 * ever makes more failures the task's.
 */
export function filesNamedBy(text: string, files: ReadonlySet<string>): Set<string> {
  const named = new Set<string>();
  const tokens = new Set(
    [...text.matchAll(/[\w@.~-]*[\w@~-](?:\/[\w@.~-]+)+\/?|[\w@~-][\w@.~-]*\.[A-Za-z][\w]{0,9}\b/g)].map((m) =>
      m[0].replace(/^\.\//, '').replace(/[.]+$/, ''),
    ),
  );
  if (tokens.size === 0) return named;
  const byBase = new Map<string, string[]>();
  for (const file of files) {
    const base = file.slice(file.lastIndexOf('/') + 1);
    byBase.set(base, [...(byBase.get(base) ?? []), file]);
  }
  for (const token of tokens) {
    if (files.has(token)) named.add(token);
    else if (!token.includes('/')) for (const f of byBase.get(token) ?? []) named.add(f);
    else {
      const dir = token.replace(/\/$/, '');
      for (const f of files) if (f.startsWith(`${dir}/`) || f.endsWith(`/${dir}`)) named.add(f);
    }
  }
  return named;
}

/**
 * Whether the promise asks for the whole suite to pass ("all tests pass", "the test suite is
 * green", "npm test passes"): then no failure is forgiven by evidence, only by a person.
 */
export function asksWholeSuite(promise: string): boolean {
  const text = promise.toLowerCase();
  return (
    /\b(?:all|every|whole|entire|full)\b[^.;\n]{0,40}\b(?:tests?|specs?|suites?)\b[^.;\n]{0,40}\b(?:pass(?:es|ing)?|green|succeed)/.test(
      text,
    ) ||
    /\b(?:test )?suite\b[^.;\n]{0,30}\b(?:pass(?:es)?|is green|succeeds)\b/.test(text) ||
    /\b(?:npm|yarn|pnpm) (?:run )?test\b[^.;\n]{0,30}\b(?:pass(?:es)?|succeeds|exits? (?:with )?0|is green)/.test(text) ||
    /\bno (?:failing|red|broken) tests?\b|\b(?:the )?tests all pass\b/.test(text)
  );
}
