import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { CONVENTIONAL_TEST_FILE } from './testFilePattern';

/**
 * Which repo files a gate's command line makes part of the gate's definition. A gate is defined
 * by the scripts it runs and the configs it reads, not by the code it checks: `bash
 * scripts/check.sh`, `node tools/verify.js`, `./ci/test`, `jest --config jest.ci.js` and any
 * config-like file (`*.json`, `*.toml`, `.xxxrc`…) count; `node -e "require('./src/x.js')"`,
 * `node --test test/x.test.js` or `pytest src/app.py` do not — the agent must be free to fix
 * `src/x.js`, and tests are guarded by the test inventory instead.
 */
export async function definitionFilesNamed(texts: readonly string[], workspace: string): Promise<string[]> {
  const found: string[] = [];
  for (const candidate of texts.flatMap((t) => candidates(t))) {
    const rel = path.normalize(candidate).replace(/\\/g, '/');
    if (rel.startsWith('../') || path.isAbsolute(rel) || rel.startsWith('.git/') || rel.startsWith('node_modules/') || found.includes(rel))
      continue;
    const stat = await fs.stat(path.join(workspace, rel)).catch(() => undefined);
    if (stat?.isFile()) found.push(rel);
  }
  return found;
}

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh']);
const INTERPRETERS = new Set([
  'node',
  'nodejs',
  'python',
  'python3',
  'python2',
  'ruby',
  'perl',
  'php',
  'deno',
  'bun',
  'tsx',
  'ts-node',
  'pwsh',
  'Rscript',
  'lua',
  ...SHELLS,
]);
/** Flags after which the interpreter runs inline code, not a file. */
const INLINE = new Set(['-e', '--eval', '-p', '--print', '-c', '-m', '-r', '--require', '--import', '--loader']);
/** Flags whose value is a config file, for any tool. */
const CONFIG_FLAG =
  /^(?:--?(?:c|config|config-file|configFile|project|p|rcfile|settings|setup-file|setupFiles|reporter-options|spec-config|tsconfig))$/;
const CONFIG_FILE =
  /(?:^|\/)(?:\.[^/]+rc(?:\.[a-z]+)?|[^/]+\.(?:json|jsonc|json5|ya?ml|toml|ini|cfg|conf)|[^/]+\.config\.[a-z]+|Makefile|makefile|GNUmakefile|justfile|Taskfile\.ya?ml)$/;
const SCRIPT_DIR = /^(?:\.\/)?(?:scripts?|bin|tools|ci|\.ci|\.github)\//;

/** The words of a command line that name definition files (scripts run, configs read). */
function candidates(commandLine: string): string[] {
  const out: string[] = [];
  for (const words of segments(commandLine)) {
    let i = 0;
    while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i])) i++; // VAR=value prefixes
    if (['npx', 'exec', 'env', 'time', 'nice', 'nohup', 'timeout'].includes(words[i])) i++;
    const command = words[i];
    if (command === undefined) continue;
    if (/[./]/.test(command) && !command.startsWith('-')) out.push(command); // ./scripts/check, bin/test
    let name = path.basename(command);
    for (let j = i + 1; j < words.length; j++) {
      const word = words[j];
      if (INTERPRETERS.has(name) && word === '-m' && words[j + 1] !== undefined) {
        name = words[++j]; // `python -m pytest …`: the module's own arguments follow
        continue;
      }
      if (CONFIG_FLAG.test(word) && !(INTERPRETERS.has(name) && INLINE.has(word)) && words[j + 1] !== undefined) {
        out.push(words[++j]);
        continue;
      }
      if (INTERPRETERS.has(name) && INLINE.has(word)) {
        // `bash -c "…"` runs a command line: its words are looked at the same way; node -e / python -c run code
        if (SHELLS.has(name) && word === '-c' && words[j + 1] !== undefined) out.push(...candidates(words[j + 1]));
        break;
      }
      if (word.startsWith('-')) continue;
      if (INTERPRETERS.has(name)) {
        if (!CONVENTIONAL_TEST_FILE.test(word)) out.push(word); // the script the interpreter runs
        name = ''; // its own arguments follow
        continue;
      }
      if (CONFIG_FILE.test(word) || SCRIPT_DIR.test(word)) out.push(word);
    }
  }
  return out.filter((w) => w && /[./]/.test(w) && !/^\.+$/.test(w) && !w.includes(' '));
}

/** Simple commands of a line, each as its words (quotes removed; `;`, `&&`, `||`, `|`, parentheses separate). */
function segments(line: string): string[][] {
  const out: string[][] = [];
  let words: string[] = [];
  let word = '';
  let quoted = false;
  const endWord = () => {
    if (word || quoted) words.push(word);
    word = '';
    quoted = false;
  };
  const endSegment = () => {
    endWord();
    if (words.length) out.push(words);
    words = [];
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'" || c === '"') {
      const close = line.indexOf(c, i + 1);
      const end = close < 0 ? line.length : close;
      word += line.slice(i + 1, end);
      quoted = true;
      i = end;
    } else if (c === '\\' && i + 1 < line.length) word += line[++i];
    else if (/\s/.test(c)) endWord();
    else if (';&|()<>`'.includes(c)) endSegment();
    else word += c;
  }
  endSegment();
  return out;
}
