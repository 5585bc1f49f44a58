/**
 * TAP streams in a gate's output, each given to the one runner that wrote it. node:test, tape,
 * node-tap, ava (`--tap`) and mocha's tap reporter all print `ok N`/`not ok N` lines, so a
 * parser that read every TAP line would count another runner's tests (or count them twice):
 * the output is cut into documents and each document has exactly one dialect.
 *
 * A document starts at `TAP version N` (at the margin) and ends with its `# tests N` summary
 * block, at the next `TAP version` or at the end of the output. A summary with no header before
 * it (mocha's tap reporter prints none) makes a document of the lines since the previous one.
 */

/** `generic`: TAP that none of the others claims (brittle, zora, …), read as plain TAP (`genericTap.ts`). */
export type TapDialect = 'node-test' | 'tape' | 'node-tap' | 'flat' | 'generic';

export interface TapDocument {
  dialect: TapDialect;
  /** The document's lines before its summary block. */
  lines: readonly string[];
  /** The summary block's numbers by key (`tests`, `pass`, `fail`…); absent when the stream has none (node-tap, a run cut short). */
  summary?: ReadonlyMap<string, number>;
}

const HEADER = /^TAP version \d+\s*$/;
const SUMMARY_START = /^# tests \d+\s*$/;
const SUMMARY_LINE = /^# (\w+)( +)(\d+(?:\.\d+)?)\s*$/;

/** Each runner's parser asks for the documents of the same lines: they are cut once. */
const cut = new WeakMap<readonly string[], readonly TapDocument[]>();

/** The TAP documents of `lines`, each with the dialect of the runner that wrote it; streams no parser knows are left out. */
export function tapDocuments(lines: readonly string[]): readonly TapDocument[] {
  const known = cut.get(lines);
  if (known) return known;
  const docs = cutDocuments(lines);
  cut.set(lines, docs);
  return docs;
}

function cutDocuments(lines: readonly string[]): TapDocument[] {
  const docs: TapDocument[] = [];
  let open = -1;
  let free = 0;
  const close = (from: number, to: number, summary?: Summary) => {
    const body = lines.slice(from, to);
    const dialect = dialectOf(body, summary);
    if (dialect) docs.push({ dialect, lines: body, ...(summary ? { summary: summary.values } : {}) });
  };
  for (let i = 0; i < lines.length; i++) {
    if (HEADER.test(lines[i])) {
      if (open >= 0) close(open, i);
      open = i;
      continue;
    }
    if (!SUMMARY_START.test(lines[i])) continue;
    const summary = readSummary(lines, i);
    close(open >= 0 ? open : free, i, summary);
    open = -1;
    free = summary.end;
    i = summary.end - 1;
  }
  if (open >= 0) close(open, lines.length);
  return docs;
}

interface Summary {
  values: Map<string, number>;
  /** A value written after two spaces (`# pass  3`): tape's way. */
  spaced: boolean;
  /** tape's `# ok` after a run without failures. */
  ok: boolean;
  /** The first line after the block. */
  end: number;
}

/** The `# key N` lines from `from` on; tape's `# ok` (after a blank line) belongs to it. */
function readSummary(lines: readonly string[], from: number): Summary {
  const values = new Map<string, number>();
  let spaced = false;
  let ok = false;
  let i = from;
  for (; i < lines.length; i++) {
    const m = SUMMARY_LINE.exec(lines[i]);
    if (m) {
      values.set(m[1], Number(m[3]));
      spaced ||= m[2].length > 1;
      continue;
    }
    const blanks = lines[i].trim() === '' ? 1 : 0;
    if (/^# ok\s*$/.test(lines[i + blanks] ?? '')) {
      ok = true;
      i += blanks;
      continue;
    }
    break;
  }
  return { values, spaced, ok, end: i };
}

/**
 * node:test always counts `cancelled` (and, since Node 20, `suites`); tape writes `# pass  N`
 * with two spaces and ends a green run with `# ok`; node-tap prints no `# tests` summary but
 * nests every test in `# Subtest:` blocks; tape cut short (a test that threw ends the process)
 * leaves its `# name` lines before the test points. What else has a summary is flat TAP (ava
 * `--tap`, mocha's tap reporter). A document without a summary that has indented test points
 * (TAP 14 subtests: brittle) or no `# name` line before its first point is TAP of a runner no
 * dialect names: `generic`, read by `tap-parser` alone.
 */
function dialectOf(lines: readonly string[], summary: Summary | undefined): TapDialect | undefined {
  if (summary) {
    const v = summary.values;
    if (v.has('cancelled') || v.has('suites') || v.has('duration_ms')) return 'node-test';
    if (summary.spaced || summary.ok) return 'tape';
    return 'flat';
  }
  if (lines.some((l) => /^# Subtest: /.test(l))) return 'node-tap';
  // tape prints every assertion at the margin: indented points are subtests (TAP 14, brittle)
  if (lines.some((l) => /^\s+(?:not )?ok \d+\b/.test(l))) return 'generic';
  const point = lines.findIndex((l) => /^(?:not )?ok \d+/.test(l));
  if (point > 0 && lines.slice(0, point).some((l) => /^# \S/.test(l))) return 'tape';
  // any other document with a header or a plan and test points: TAP from a runner no dialect names
  if (point >= 0 && lines.some((l) => HEADER.test(l) || /^1\.\.\d+/.test(l))) return 'generic';
  return undefined;
}

/** A TAP test point: its indent, outcome, number, description (without `- `) and directive. */
export interface TapPoint {
  indent: number;
  ok: boolean;
  description: string;
  directive?: 'skip' | 'todo';
}

const POINT = /^(\s*)(ok|not ok)\b(?: \d+)?(?: -)?(?: (.*))?$/;
const DIRECTIVE = /\s*# (SKIP|TODO)\b/i;

/** The test point on `line`, if it is one; `# SKIP`/`# TODO` become the directive and node-tap's `# time=…` is dropped. */
export function tapPoint(line: string): TapPoint | undefined {
  const m = POINT.exec(line);
  if (!m) return undefined;
  // greedy and trimmed by hand: a lazy `(.*?)\s*$` backtracks on every character of node-tap's kilobyte-long names
  let description = (m[3] ?? '').trimEnd();
  let directive: TapPoint['directive'];
  const d = DIRECTIVE.exec(description);
  if (d) {
    directive = d[1].toUpperCase() === 'SKIP' ? 'skip' : 'todo';
    description = description.slice(0, d.index);
  } else description = description.replace(/\s*# time=[\d.]+m?s$/, '');
  return { indent: m[1].length, ok: m[2] === 'ok', description, ...(directive ? { directive } : {}) };
}

/** The `---` … `...` YAML block under a test point at `indent` (which starts at `from`), without its fences. */
export function tapYaml(lines: readonly string[], from: number, indent: number): string[] {
  const pad = ' '.repeat(indent + 2);
  if (lines[from]?.trimEnd() !== `${pad}---`) return [];
  const block: string[] = [];
  for (let i = from + 1; i < lines.length && lines[i].trimEnd() !== `${pad}...`; i++) block.push(lines[i]);
  return block;
}

/**
 * A key's value at the top of a YAML diagnostics block, inline or as the indented lines under it
 * (`|-`, `>-`, a nested mapping, whose keys are shown bare); undefined when absent.
 */
export function yamlValue(yaml: readonly string[], key: string): string | undefined {
  const base = Math.min(...yaml.filter((l) => l.trim()).map((l) => /^\s*/.exec(l)![0].length));
  const at = yaml.findIndex((l) => l.startsWith(`${' '.repeat(base)}${key}:`));
  if (at < 0) return undefined;
  const inline = new RegExp(`^\\s*${key}: *(?![|>][-+]?\\s*$)(\\S.*)$`).exec(yaml[at]);
  if (inline) return inline[1].replace(/^'(.*)'$/, '$1').trim();
  const body: string[] = [];
  for (let i = at + 1; i < yaml.length && (!yaml[i].trim() || /^\s*/.exec(yaml[i])![0].length > base); i++) body.push(yaml[i].trim());
  const text = body
    .filter(Boolean)
    .map((l) => l.replace(/^'(.*)':\s*[|>][-+]?$/, '$1').replace(/^([^\s'"][^:]*):\s*[|>][-+]?$/, '$1'))
    .join('\n');
  return text || undefined;
}
