// The reference parts of docs/ generated from the code, so they cannot drift from it:
// - docs/cli.md from the one definition of the CLI's verbs (src/cli/verbs.ts): each verb's page,
//   as `ralph help <verb>` prints it;
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
    export { GROUPS, VERBS } from './src/cli/verbs';
    export { verbHelp } from './src/cli/help';
    export { TASK_ACTIONS } from './src/cli/command';
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

/** GitHub's anchor for a heading. */
export function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The reference: an index of every verb, then each group's verbs, each with its page (`ralph help <verb>`). */
function renderCli(sources) {
  const { GROUPS, VERBS, TASK_ACTIONS, verbHelp } = sources;
  const heading = (verb) => `ralph ${verb.name}`;
  const index = ['| Command | What it does |', '| --- | --- |'];
  for (const verb of VERBS) index.push(`| [\`${heading(verb)}\`](#${slug(heading(verb))}) | ${verb.summary} |`);
  const sections = [];
  let anchored = false;
  for (const [group, title] of Object.entries(GROUPS)) {
    sections.push(`### ${title}`);
    for (const verb of VERBS.filter((v) => v.group === group)) {
      // the anchor other pages link the task actions by, before the first of them
      if (!anchored && TASK_ACTIONS.includes(verb.name.replace(/^task /, ''))) {
        sections.push('<a id="task-actions"></a>');
        anchored = true;
      }
      sections.push(`#### ${heading(verb)}`, '```text\n' + verbHelp(verb.name) + '\n```');
    }
  }
  return [index.join('\n'), '', sections.join('\n\n')].join('\n');
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
