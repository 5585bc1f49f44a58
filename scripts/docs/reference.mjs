// The reference parts of docs/ generated from the code, so they cannot drift from it:
// - docs/cli.md from the CLI's usage texts (src/cli/args.ts and the *Args.ts / *Command.ts usages:
//   the text `ralph --help` prints);
// - docs/configuration.md from the zod schema of .ralph/config.json (src/core/config/schema.ts:
//   every key, its type, default and `.describe()` text);
// - the task fields in docs/files.md from the task schema (src/core/tasks/schema.ts).
// A generated part sits between `<!-- generated:NAME -->` and `<!-- end generated:NAME -->`;
// the prose around it is written by hand. `npm run docs` rewrites the parts; `npm run check:docs`
// compares them with what the code gives now.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The usage texts and JSON schemas, read from the TypeScript sources (bundled in memory). */
async function loadSources() {
  const entry = `
    export { USAGE } from './src/cli/args';
    export { IMPORT_USAGE } from './src/cli/importCommand';
    export { TASK_ACTIONS_USAGE } from './src/cli/taskActionArgs';
    export { PERSON_USAGE } from './src/cli/personArgs';
    export { PLAN_USAGE } from './src/cli/planCommand';
    export { FORGE_USAGE } from './src/cli/forgeArgs';
    export { configJsonSchema, tasksJsonSchema } from './src/core/config/jsonSchema';
  `;
  const built = await esbuild.build({
    stdin: { contents: entry, resolveDir: root, loader: 'ts', sourcefile: 'docs-sources.ts' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  });
  const module = { exports: {} };
  const requireHere = createRequire(path.join(root, 'package.json'));
  const file = path.join(root, 'dist', 'docs-sources.js');
  new Function('module', 'exports', 'require', '__filename', '__dirname', built.outputFiles[0].text)(
    module,
    module.exports,
    requireHere,
    file,
    path.dirname(file),
  );
  return module.exports;
}

const BEGIN = (name) => `<!-- generated:${name} -->`;
const END = (name) => `<!-- end generated:${name} -->`;

/** `text` with the part `name` replaced by `content`; an error when the markers are missing. */
export function fillPart(text, name, content, file) {
  const begin = text.indexOf(BEGIN(name));
  const end = text.indexOf(END(name));
  if (begin < 0 || end < begin) throw new Error(`${file}: the markers ${BEGIN(name)} … ${END(name)} are missing`);
  return `${text.slice(0, begin + BEGIN(name).length)}\n${content.trimEnd()}\n${text.slice(end)}`;
}

// ---------- the CLI ----------

/** The families of verbs, as the usage composes them (a part of USAGE not listed here gets its verbs as a title). */
const FAMILIES = [
  ['IMPORT_USAGE', 'Import GitHub issues'],
  ['TASK_ACTIONS_USAGE', 'Task actions'],
  ['PERSON_USAGE', 'Answers and review'],
  ['PLAN_USAGE', 'Plans'],
  ['FORGE_USAGE', 'GitHub Actions'],
];
const CORE_TITLES = { 'init task add task list': 'Set up and add tasks', run: 'Run', 'status schema completion help': 'Status and schemas, help and completion' };

/** The verb of a usage entry: its words up to the first argument or option. */
function verbOf(line) {
  const words = [];
  for (const word of line.trim().split(/\s+/)) {
    if (/^[<["-]/.test(word)) break;
    words.push(word);
  }
  return words.join(' ');
}

/** One usage part: its entries (a line indented by two spaces starts one) and their verbs. */
function entriesOf(text) {
  const entries = [];
  for (const line of text.split('\n')) {
    if (/^ {2}\S/.test(line)) entries.push({ head: line.slice(2), lines: [line] });
    else if (entries.length > 0 && line.trim()) entries.at(-1).lines.push(line);
  }
  return entries.map((e) => {
    const synopsis = e.head.split(/ {2,}/)[0].trim();
    return { ...e, verb: verbOf(synopsis), synopsis };
  });
}

/** USAGE cut into its parts, in its order: the families' texts and the parts between them. */
function usageParts(sources) {
  const usage = sources.USAGE;
  const start = usage.indexOf('Commands:\n') + 'Commands:\n'.length;
  const endAt = usage.indexOf('\n\n', start);
  const body = usage.slice(start, endAt);
  const found = FAMILIES.map(([key, title]) => ({ title, text: sources[key], at: body.indexOf(sources[key]) }))
    .filter((f) => f.at >= 0)
    .sort((a, b) => a.at - b.at);
  const parts = [];
  let at = 0;
  for (const family of [...found, { at: body.length }]) {
    const between = body.slice(at, family.at).replace(/^\n+|\n+$/g, '');
    if (between.trim()) parts.push({ title: undefined, text: between });
    if (family.text) parts.push({ title: family.title, text: family.text });
    at = family.at + (family.text?.length ?? 0);
  }
  return {
    parts: parts.map((p) => {
      const entries = entriesOf(p.text);
      const verbs = [...new Set(entries.map((e) => e.verb))];
      return { ...p, entries, title: p.title ?? CORE_TITLES[verbs.join(' ')] ?? verbs.map((v) => `ralph ${v}`).join(', ') };
    }),
    head: usage.slice(0, start).trim(),
    tail: usage.slice(endAt).trim(),
  };
}

/** GitHub's anchor for a heading. */
export function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function dedent(lines) {
  return lines.map((l) => l.replace(/^ {2}/, '')).join('\n');
}

function renderCli(sources) {
  const { parts, tail } = usageParts(sources);
  const index = ['| Command | Reference |', '| --- | --- |'];
  for (const part of parts)
    for (const entry of part.entries) index.push(`| \`ralph ${entry.synopsis.replace(/\|/g, '\\|')}\` | [${part.title}](#${slug(part.title)}) |`);
  const sections = parts.map((part) => `### ${part.title}\n\n\`\`\`text\n${dedent(part.text.split('\n'))}\n\`\`\``);
  return [
    index.join('\n'),
    '',
    sections.join('\n\n'),
    '',
    '### Every command',
    '',
    '```text',
    tail,
    '```',
  ].join('\n');
}

// ---------- JSON schema tables (configuration, task fields) ----------

const code = (value) => `\`${value}\``;
/** Text for a table cell: pipes escaped, one line, and `<…>` and `*` outside code spans kept as written (not HTML, not emphasis). */
const cell = (text) =>
  String(text)
    .replace(/\n+/g, ' ')
    .split('`')
    .map((piece, i) => (i % 2 === 0 ? piece.replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\*/g, '\\*') : piece))
    .join('`')
    .replace(/\|/g, '\\|');

function bound(schema) {
  const parts = [];
  const big = (n) => n >= Number.MAX_SAFE_INTEGER;
  if (schema.minimum !== undefined && schema.maximum !== undefined && !big(schema.maximum)) return `${schema.minimum}–${schema.maximum}`;
  if (schema.minimum !== undefined) parts.push(`≥ ${schema.minimum}`);
  if (schema.exclusiveMinimum !== undefined) parts.push(`> ${schema.exclusiveMinimum}`);
  if (schema.maximum !== undefined && !big(schema.maximum)) parts.push(`≤ ${schema.maximum}`);
  return parts.join(', ');
}

/** A schema's type in a few words. */
export function typeOf(schema) {
  if (schema.enum) return schema.enum.map((v) => code(JSON.stringify(v))).join(' \\| ');
  if (schema.const !== undefined) return code(JSON.stringify(schema.const));
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.map(typeOf).join(' or ');
  switch (schema.type) {
    case 'integer':
    case 'number': {
      const range = bound(schema);
      return range ? `${schema.type} ${range}` : schema.type;
    }
    case 'string':
      return schema.format === 'uri' ? 'URL' : 'string';
    case 'array':
      return `list of ${schema.items ? typeOf(schema.items) : 'values'}`;
    case 'object':
      if (schema.properties) return 'object';
      if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        const key = schema.propertyNames?.enum ? schema.propertyNames.enum.join(', ') : 'name';
        return `map: ${key} → ${typeOf(schema.additionalProperties)}`;
      }
      return 'object';
    default:
      return schema.type ?? 'any';
  }
}

function defaultOf(schema, required = false) {
  if (schema.default === undefined) return required ? 'required' : '';
  const text = JSON.stringify(schema.default);
  return text === '{}' ? '' : code(text);
}

/** Rows `[key, schema, required]` for every key under `schema`, children after their parent. */
function rowsOf(schema, key) {
  const rows = [];
  const required = new Set(schema.required ?? []);
  if (schema.properties)
    for (const [name, child] of Object.entries(schema.properties)) {
      const childKey = key ? `${key}.${name}` : name;
      rows.push([childKey, child, required.has(name) && child.default === undefined], ...rowsOf(child, childKey));
    }
  if (schema.type === 'array' && schema.items?.properties) rows.push(...rowsOf(schema.items, `${key}[]`));
  const value = schema.additionalProperties;
  if (value && typeof value === 'object' && value.properties) rows.push(...rowsOf(value, `${key}.<${schema.propertyNames?.enum ? 'type' : 'name'}>`));
  return rows;
}

function table(rows, { withDefault = true } = {}) {
  const header = withDefault ? '| Key | Type | Default | Description |\n| --- | --- | --- | --- |' : '| Field | Type | Description |\n| --- | --- | --- |';
  const lines = rows.map(([key, schema, required]) =>
    withDefault
      ? `| ${code(key)} | ${typeOf(schema)} | ${defaultOf(schema, required)} | ${cell(schema.description ?? '')} |`
      : `| ${code(key)} | ${typeOf(schema)} | ${cell([schema.description, defaultOf(schema) && `default ${defaultOf(schema)}`].filter(Boolean).join('; '))} |`,
  );
  return `${header}\n${lines.join('\n')}`;
}

function renderConfiguration(sources) {
  const schema = sources.configJsonSchema();
  const sections = [];
  const top = Object.entries(schema.properties).filter(([, s]) => !(s.properties || s.items?.properties));
  sections.push(table(top));
  for (const [name, section] of Object.entries(schema.properties)) {
    if (!(section.properties || section.items?.properties)) continue;
    sections.push(`### \`${name}\`\n\n${section.description ? `${section.description[0].toUpperCase()}${section.description.slice(1)}.\n\n` : ''}${table(rowsOf(section, name))}`);
  }
  return sections.join('\n\n');
}

function renderTaskFields(sources) {
  const task = sources.tasksJsonSchema().properties.tasks.items;
  const rows = Object.entries(task.properties).map(([name, s]) => [name, s]);
  const required = new Set(task.required ?? []);
  return table(rows.map(([name, s]) => [required.has(name) && s.default === undefined ? `${name}` : `${name}?`, s]), { withDefault: false });
}

/** Every generated part: file → part name → content. */
export async function generatedParts() {
  const sources = await loadSources();
  return {
    'docs/cli.md': { usage: renderCli(sources) },
    'docs/configuration.md': { keys: renderConfiguration(sources) },
    'docs/files.md': { 'task-fields': renderTaskFields(sources) },
  };
}
