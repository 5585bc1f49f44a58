// Code the rules cannot read (issue 48): an interpreter's program given inline (`node -e`,
// `python -c`, `perl -e`…) or on its stdin (a here-doc, a pipe), and the script files a command
// line runs, which the policy compares with what the task changed. Without a sandbox such code
// runs with the user's own rights, so it is asked about; the sandbox makes it harmless.
import { excerpt, judgeScriptFile, type State } from './analysisState';
import type { Verdict } from './commandRules';
import { stdinSources } from './commandSources';
import type { SyntaxNode } from './shellParser';
import { literal, type ShellWord } from './shellWords';

/** What code outside the rules' sight could reach where nothing confines it: the question names it. */
export const UNCONFINED_REACH =
  "without a sandbox it runs with your user's rights: it could change files outside the workspace (your home, ~/.bashrc), the orchestrator's records under .ralph/, and reach the network";

/** How an interpreter takes its program: the options that give it inline, those that take a value, those that run nothing. */
interface Interpreter {
  inline: (option: string) => boolean;
  valued: ReadonlySet<string>;
  /** Options after which no program runs (a version, help, a syntax check). */
  inert: ReadonlySet<string>;
  /** Options that name the program's file (`php -f x.php`, `awk -f x.awk`). */
  file?: ReadonlySet<string>;
}

const exact =
  (...options: string[]) =>
  (o: string) =>
    options.some((x) => o === x || o.startsWith(`${x}=`));
const NODE: Interpreter = {
  inline: (o) => exact('--eval', '--print')(o) || /^-[a-zA-Z]*[ep][a-zA-Z]*$/.test(o),
  valued: new Set(['-r', '--require', '--import', '--loader', '--experimental-loader', '-C', '--conditions', '--input-type', '--env-file']),
  inert: new Set(['-v', '--version', '-h', '--help', '-c', '--check', '--v8-options']),
};
const PYTHON: Interpreter = {
  inline: (o) => /^-[bBdEiIOPqRsSuv]*c/.test(o),
  valued: new Set(['-W', '-X', '--check-hash-based-pycs']),
  inert: new Set(['-V', '--version', '-h', '--help', '-VV']),
};
const PERL: Interpreter = {
  // `-I`, `-M`, `-m`, `-x`, `-d` take the rest of their word; `-pe`, `-lane`, `-E` give code
  inline: (o) => !o.startsWith('--') && /^-(?![IMmxdD])[a-zA-Z0-9.]*[eE]/.test(o),
  valued: new Set(['-I', '-M', '-m']),
  inert: new Set(['-v', '--version', '-V', '-h', '--help']),
};
const RUBY: Interpreter = {
  inline: (o) => !o.startsWith('--') && /^-(?![IrCEx])[a-zA-Z0-9]*e/.test(o),
  valued: new Set(['-I', '-r', '-C', '-E', '--encoding']),
  inert: new Set(['--version', '-h', '--help', '-c', '-y']),
};
const PHP: Interpreter = {
  inline: (o) => ['-r', '-R', '-B', '-E', '-F', '-a', '--run', '--process-code', '--process-begin', '--process-end'].includes(o),
  valued: new Set(['-c', '-d', '-z', '-t', '-S']),
  inert: new Set(['-v', '--version', '-h', '--help', '-i', '--info', '-m', '--modules', '-l', '--syntax-check']),
  file: new Set(['-f', '--file']),
};
const EVAL_ONLY: Interpreter = {
  inline: exact('-e', '--eval', '-p', '--print', '-pe'),
  valued: new Set(['-r', '--require']),
  inert: new Set(['-v', '--version', '-h', '--help']),
};
const AWK: Interpreter = {
  inline: () => false,
  valued: new Set(['-v', '-F', '--assign', '--field-separator', '-i', '--include', '-l', '--load']),
  inert: new Set(['--version', '-V', '--help']),
  file: new Set(['-f', '--file']),
};
const SHELL_LIKE: Interpreter = {
  inline: exact('-c', '-e', '-Command', '-command', '-EncodedCommand'),
  valued: new Set(['-l']),
  inert: new Set(['-v', '--version', '-h', '--help', '-Version']),
};

/** The interpreters whose inline or stdin program is unseen code, by command name. */
const INTERPRETERS: ReadonlyMap<string, Interpreter> = new Map([
  ...['node', 'nodejs'].map((n) => [n, NODE] as const),
  ...['python', 'python2', 'python3', 'pypy', 'pypy3'].map((n) => [n, PYTHON] as const),
  ['perl', PERL],
  ['ruby', RUBY],
  ['php', PHP],
  ...['bun', 'tsx', 'ts-node', 'ts-node-esm', 'lua', 'luajit', 'Rscript'].map((n) => [n, EVAL_ONLY] as const),
  ...['awk', 'gawk', 'mawk', 'nawk'].map((n) => [n, AWK] as const),
  ...['osascript', 'pwsh', 'powershell'].map((n) => [n, SHELL_LIKE] as const),
]);

/** A word that is a subcommand (`run`, `test`, `watch`), not a script's path. */
const SUBCOMMAND = /^[a-z][a-z-]*$/;

/** An awk program that runs commands or writes files (`system(…)`, `print … | "cmd"`, `print … > "file"`). */
const AWK_REACHES = /\bsystem\s*\(|\|&?\s*getline|\b(?:print|printf)\b[^;{}]*[|>]|\bgetline\s*<|\bclose\s*\(/;

export function isInterpreter(name: string): boolean {
  return INTERPRETERS.has(name) || name === 'deno';
}

/**
 * Judges an interpreter's command: inline code or a program on stdin is asked (confinable: the
 * sandbox confines it), a download piped in is refused, and the script file it runs is recorded
 * for the policy to compare with what the task changed.
 */
export function judgeInterpreter(st: State, name: string, args: ShellWord[], node: SyntaxNode): Verdict[] {
  if (name === 'deno') return judgeDeno(st, args, node);
  const spec = INTERPRETERS.get(name);
  if (!spec) return [];
  let i = 0;
  for (; i < args.length; i++) {
    const v = args[i].value;
    if (v === undefined) return [unseen(`${name} with an option known only when it runs (${args[i].text})`)];
    if (v === '--' || !v.startsWith('-') || v === '-') break;
    if (spec.inert.has(v)) return [];
    if (spec.inline(v)) return [unseen(`${name} ${v}: code given inline`)];
    if (spec.file?.has(v)) return scriptAt(st, args[i + 1]);
    if (name.startsWith('python') && v === '-m') return moduleScripts(st, args[i + 1]);
    if (spec.valued.has(v)) i++;
  }
  if (args[i]?.value === '--') i++;
  const operand = args[i];
  if (AWK === spec) {
    if (!operand) return [];
    if (operand.value === undefined) return [unseen(`${name} with a program known only when it runs (${operand.text})`)];
    return AWK_REACHES.test(operand.value)
      ? [unseen(`${name} '${excerpt(operand.value)}': a program that runs commands or writes files`)]
      : [];
  }
  // a runner with subcommands (`bun run build`, `bun test`, `tsx watch x.ts`): the first path among its words is the script
  if (spec === EVAL_ONLY && operand?.value !== undefined && SUBCOMMAND.test(operand.value))
    return scriptAt(
      st,
      args.slice(i + 1).find((a) => a.value === undefined || /[./]/.test(a.value)),
    );
  if (operand && operand.value !== '-')
    return scriptAt(st, operand, name === 'node' && args.some((a) => a.value === '--test'), args.slice(i + 1));
  return fromStdin(st, name, node);
}

/** `deno eval CODE`, `deno repl`, `deno run -` are unseen code; `deno run FILE` runs a file. */
function judgeDeno(st: State, args: ShellWord[], node: SyntaxNode): Verdict[] {
  const words = args.filter((a) => a.value === undefined || !a.value.startsWith('-'));
  const sub = words[0];
  if (!sub) return [];
  if (sub.value === undefined) return [unseen(`deno ${sub.text}: a subcommand known only when it runs`)];
  if (sub.value === 'eval' || sub.value === 'repl') return [unseen(`deno ${sub.value}: code given inline`)];
  if (sub.value !== 'run') return [];
  if (!words[1] || words[1].value === '-') return fromStdin(st, 'deno', node);
  return scriptAt(st, words[1]);
}

/** No program named: the interpreter reads it from stdin. */
function fromStdin(st: State, name: string, node: SyntaxNode): Verdict[] {
  const sources = stdinSources(node);
  if (sources.downloads) return [{ action: 'deny', reason: `piping a download into ${name}` }];
  const file = stdinFile(node);
  if (file) return scriptAt(st, file);
  if (sources.texts.length > 0 || sources.unknown.length > 0) return [unseen(`${name} reading its program from stdin`)];
  return [];
}

/** A script the interpreter runs (`node --test a.js b.js`: every file); recorded for the policy's comparison with the task's changes. */
function scriptAt(st: State, word: ShellWord | undefined, all = false, rest: ShellWord[] = []): Verdict[] {
  if (!word) return [];
  if (word.value === undefined) return [unseen(`running a script known only when it runs (${word.text})`)];
  const files = [word, ...(all ? rest.filter((a) => a.value !== undefined && !a.value.startsWith('-')) : [])];
  return files.flatMap((file) => judgeScriptFile(st, file));
}

/** `python -m pkg.mod` runs `pkg/mod.py` or `pkg/mod/__main__.py` when the workspace has them. */
function moduleScripts(st: State, word: ShellWord | undefined): Verdict[] {
  if (!word?.value) return word ? [unseen(`python -m with a module known only when it runs (${word.text})`)] : [];
  const base = word.value.replace(/\./g, '/');
  for (const candidate of [`${base}.py`, `${base}/__main__.py`]) judgeScriptFile(st, { ...word, value: candidate }, { ifExists: true });
  return [];
}

/** `node < script.js`: the file redirected into the interpreter is its program. */
function stdinFile(command: SyntaxNode): ShellWord | undefined {
  let stage = command;
  while (stage.parent?.type === 'redirected_statement' && stage.parent.childForFieldName('body')?.id === stage.id) {
    stage = stage.parent;
    for (const r of stage.childrenForFieldName('redirect')) {
      if (r?.type !== 'file_redirect') continue;
      const operator = r.children.find((c) => c && !c.isNamed)?.type;
      const destination = r.childForFieldName('destination');
      if (operator === '<' && destination) return { value: literal(destination), text: destination.text, node: destination };
    }
  }
  return undefined;
}

function unseen(what: string): Verdict {
  return { action: 'ask', reason: `${what}, which the rules cannot read; ${UNCONFINED_REACH}`, confinable: true };
}
