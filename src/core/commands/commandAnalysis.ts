import type { Parser } from 'web-tree-sitter';
import {
  changeDirectory,
  excerpt,
  type Finding,
  judgeGeneratedScript,
  judgeScriptFile,
  recordDownloads,
  type ScriptRun,
  type State,
} from './analysisState';
import { judgeRecursiveDelete, type PathContext, resolvePath } from './commandPaths';
import { judgeSimple, positionals, type Verdict } from './commandRules';
import { containsDownloader, DOWNLOADERS, stdinSources } from './commandSources';
import { isInterpreter, judgeInterpreter } from './inlineCode';
import { loopBinding, loopVariants } from './loopValues';
import type { SyntaxNode } from './shellParser';
import { judgeFunction, judgeReads, judgeRedirect } from './shellNodeRules';
import { afterOptions, commandBase, type ShellWord, shellWord, xargsReplace } from './shellWords';

export type { Finding } from './analysisState';

export interface Analysis {
  findings: Finding[];
  /** Every simple command found, normalised (bare command word, quotes removed), wrappers included. */
  commands: string[];
  /** Script files the line runs, and what it writes: the policy compares them with the task's changes. */
  scripts: ScriptRun[];
  written: ReadonlySet<string>;
  writtenUnknown: boolean;
}

/** Shell text inside shell text (`bash -c`, `eval`, here-docs fed to a shell) is parsed this deep at most. */
const MAX_DEPTH = 8;
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'yash', 'posh']);

/** Parses a command line with the bash grammar and judges every simple command anywhere in it. */
export function analyseCommand(parser: Parser, text: string, where: PathContext): Analysis {
  const state: State = {
    parser,
    where: { ...where },
    findings: [],
    commands: [],
    downloaded: new Set(),
    downloadedUnnamed: false,
    scripts: [],
    written: new Set(),
    writtenUnknown: false,
    current: text,
    loops: new Map(),
  };
  analyseText(state, text, 0, text);
  const { findings, commands, scripts, written, writtenUnknown } = state;
  return { findings, commands, scripts, written, writtenUnknown };
}

function analyseText(st: State, text: string, depth: number, shown: string): void {
  if (depth > MAX_DEPTH) {
    st.findings.push({ action: 'ask', reason: 'shell text nested too deeply to judge', command: excerpt(shown) });
    return;
  }
  const tree = st.parser.parse(text);
  if (!tree) {
    st.findings.push({ action: 'ask', reason: 'the command could not be parsed', command: excerpt(shown) });
    return;
  }
  try {
    if (tree.rootNode.hasError)
      st.findings.push({
        action: 'ask',
        reason: `the command is not valid shell syntax as written (${excerpt(text)}), so it cannot be judged`,
        command: excerpt(text),
      });
    walk(st, tree.rootNode, depth);
  } finally {
    tree.delete();
  }
}

function walk(st: State, node: SyntaxNode, depth: number): void {
  switch (node.type) {
    case 'command':
      judgeCommandNode(st, node, depth);
      break;
    case 'file_redirect':
      judgeRedirect(st, node);
      break;
    case 'function_definition':
      judgeFunction(st, node);
      break;
    case 'variable_assignment':
    case 'declaration_command':
    case 'herestring_redirect':
      judgeReads(st, node);
      break;
    case 'for_statement':
      return walkLoop(st, node, depth);
  }
  for (const child of node.namedChildren) if (child) walk(st, child, depth);
}

/** A `for` loop over spelled-out values: its body's writes through the variable are judged for each value. */
function walkLoop(st: State, node: SyntaxNode, depth: number): void {
  const binding = loopBinding(node);
  const outer = binding ? st.loops.get(binding.name) : undefined;
  if (binding) st.loops.set(binding.name, binding.values);
  try {
    for (const child of node.namedChildren) if (child) walk(st, child, depth);
  } finally {
    if (binding && outer) st.loops.set(binding.name, outer);
    else if (binding) st.loops.delete(binding.name);
  }
}

function judgeCommandNode(st: State, node: SyntaxNode, depth: number): void {
  const name = node.childForFieldName('name');
  if (!name) return; // assignments only; their values are walked as children
  const words = [name, ...node.childrenForFieldName('argument').filter((n): n is SyntaxNode => n !== null)].map(shellWord);
  for (const variant of loopVariants(st.parser, words, st.loops) ?? [words]) judgeWords(st, variant, node, depth);
}

/** Commands that run the command in their arguments: the options of theirs that take a value, and words to skip after them. */
const WRAPPERS: ReadonlyMap<string, { valued: ReadonlySet<string>; skip?: number }> = new Map<
  string,
  { valued: ReadonlySet<string>; skip?: number }
>([
  ...['builtin', 'nohup', 'chronic', 'unbuffer', 'time', 'setsid'].map((name) => [name, { valued: new Set<string>() }] as const),
  ['exec', { valued: new Set(['-a']) }],
  ['nice', { valued: new Set(['-n']) }],
  ['ionice', { valued: new Set(['-c', '-n', '-t', '-p', '-P', '-u']) }],
  ['stdbuf', { valued: new Set(['-i', '-o', '-e']) }],
  // timeout DURATION COMMAND…
  ['timeout', { valued: new Set(['-s', '-k', '--signal', '--kill-after']), skip: 1 }],
  ...['sudo', 'doas'].map((name) => [name, { valued: new Set(['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U', '-T']) }] as const),
]);

/** Judges one simple command given as words; wrappers are judged as the command they run. */
function judgeWords(st: State, words: ShellWord[], node: SyntaxNode, depth: number): void {
  const [first, ...args] = words;
  if (!first) return;
  if (first.value === undefined) {
    const text = words.map((w) => w.text).join(' ');
    st.commands.push(text);
    st.findings.push({
      action: 'ask',
      reason: `the command name ${first.text} is known only when it runs, so the command cannot be judged`,
      command: text,
    });
    return;
  }
  const name = commandBase(first.value);
  const normalised = [name, ...args.map((a) => a.value ?? a.text)].join(' ');
  st.commands.push(normalised);
  st.current = normalised;
  const add = (verdicts: Verdict[]): void => {
    st.findings.push(...verdicts.map((v) => ({ ...v, command: normalised })));
  };
  add(
    judgeSimple({ name, args }, st.where, (value) => {
      const abs = value === undefined ? undefined : resolvePath(value, st.where);
      if (abs === undefined) st.writtenUnknown = true;
      else st.written.add(abs);
    }),
  );
  if (first.value.includes('/')) add(judgeScriptFile(st, first));
  if (DOWNLOADERS.has(name)) recordDownloads(st, name, args);

  const inner = (rest: ShellWord[]) => judgeWords(st, rest, node, depth + 1);
  const wrapper = WRAPPERS.get(name);
  if (wrapper) return inner(afterOptions(args, wrapper.valued).slice(wrapper.skip ?? 0));
  switch (name) {
    case 'command':
      if (args.some((a) => a.value === '-v' || a.value === '-V')) return; // looks the name up, runs nothing
      return inner(afterOptions(args, new Set()));
    case 'busybox': // busybox APPLET args: the applet is the command
      return inner(args);
    case 'xargs':
      return judgeXargs(args, node, inner);
    case 'alias':
    case 'trap':
    case 'eval':
    case 'watch':
      return judgeLaterText(st, name, args, depth, normalised, add);
    case 'env':
      return judgeEnv(st, args, node, depth);
    case 'source':
    case '.':
      if (args[0]?.node.type === 'process_substitution') add([judgeGeneratedScript(args[0].node)]);
      else if (args[0]) add(judgeScriptFile(st, args[0]));
      return;
    case 'find':
      return judgeFind(st, args, node, depth, add);
    case 'cd':
    case 'pushd':
      st.where.cwd = changeDirectory(positionals(args)[0], st.where);
      return;
    case 'popd':
      st.where.cwd = undefined;
      return;
  }
  if (SHELLS.has(name)) return judgeShell(st, args, node, depth, add, normalised);
  if (PACKAGE_RUNNERS.has(name)) return judgePackageRunner(st, name, args, node, depth, normalised);
  if (isInterpreter(name)) add(judgeInterpreter(st, name, args, node));
}

/** Runners of a package's binary: `npx [options] CMD…`, `bunx CMD…`, `pnpm dlx|exec CMD…`; `npx -c TEXT` runs shell text. */
const PACKAGE_RUNNERS = new Set(['npx', 'bunx']);
const NPX_VALUED = new Set(['-p', '--package', '--node-options', '--shell', '--cache', '--registry', '--prefix', '-w', '--workspace']);

function judgePackageRunner(st: State, name: string, args: ShellWord[], node: SyntaxNode, depth: number, shown: string): void {
  for (let i = 0; i < args.length; i++) {
    const v = args[i].value;
    if (v === '-c' || v === '--call') {
      const text = args[i + 1];
      if (text?.value === undefined)
        st.findings.push({ action: 'ask', reason: `${name} -c with shell text known only when it runs`, command: shown });
      else analyseText(st, text.value, depth + 1, shown);
      return;
    }
    if (v === undefined || !v.startsWith('-')) break;
  }
  const rest = afterOptions(args, NPX_VALUED);
  if (rest.length > 0) judgeWords(st, rest, node, depth + 1);
}

/** xargs' options that take a value. */
const XARGS_VALUED = new Set([
  '-I',
  '-L',
  '-n',
  '-P',
  '-d',
  '-E',
  '-s',
  '-a',
  '--arg-file',
  '--delimiter',
  '--max-args',
  '--max-procs',
  '--max-lines',
  '--replace',
  '--eof',
  '--max-chars',
]);

/** `xargs CMD…` runs CMD with arguments read from its input. */
function judgeXargs(args: ShellWord[], node: SyntaxNode, inner: (rest: ShellWord[]) => void): void {
  const rest = afterOptions(args, XARGS_VALUED);
  // the replace string stands for input: words holding it are known only when it runs
  const replace = xargsReplace(args);
  const input = (w: ShellWord): ShellWord => (replace && w.value?.includes(replace) ? { ...w, value: undefined } : w);
  if (rest.length > 0) inner([...rest.map(input), { value: undefined, text: '(arguments read from input)', node }]);
}

/** Commands whose arguments are shell text run later (an alias body, a trap's action, eval, watch): the text is judged as a command. */
function judgeLaterText(
  st: State,
  name: string,
  args: ShellWord[],
  depth: number,
  normalised: string,
  add: (verdicts: Verdict[]) => void,
): void {
  if (name === 'alias' || name === 'trap') {
    const texts = name === 'alias' ? args.map((a) => a.value?.replace(/^[^=]*=/, '')) : args.slice(0, 1).map((a) => a.value);
    if (texts.some((t) => t === undefined)) return add([{ action: 'ask', reason: `${name} with shell text known only when it runs` }]);
    for (const text of texts) if (text) analyseText(st, text, depth + 1, normalised);
    return;
  }
  if (name === 'eval') {
    if (args.some((a) => a.value === undefined)) {
      add([
        args.some((a) => containsDownloader(a.node))
          ? { action: 'deny', reason: 'running a downloaded script' }
          : { action: 'ask', reason: 'eval of text known only when it runs' },
      ]);
      return;
    }
    return analyseText(st, args.map((a) => a.value).join(' '), depth + 1, normalised);
  }
  // watch [options] command…
  const rest = afterOptions(args, new Set(['-n', '-d', '--interval', '--differences']));
  if (rest.some((a) => a.value === undefined)) return add([{ action: 'ask', reason: 'watch of a command known only when it runs' }]);
  if (rest.length > 0) analyseText(st, rest.map((a) => a.value).join(' '), depth + 1, normalised);
}

function judgeEnv(st: State, args: ShellWord[], node: SyntaxNode, depth: number): void {
  let i = 0;
  let where = st.where;
  for (; i < args.length; i++) {
    const v = args[i].value;
    if (v === undefined) break;
    if (v === '--') {
      i++;
      break;
    }
    if (v === '-S' || v.startsWith('--split-string')) {
      const text = v === '-S' ? args[i + 1]?.value : v.split('=').slice(1).join('=');
      if (text === undefined) st.findings.push({ action: 'ask', reason: 'env -S with text known only when it runs', command: 'env' });
      else analyseText(st, [text, ...args.slice(i + (v === '-S' ? 2 : 1)).map((a) => a.value ?? a.text)].join(' '), depth + 1, 'env -S');
      return;
    }
    if (v === '-C' || v === '--chdir' || v.startsWith('--chdir=')) {
      const dir = v.startsWith('--chdir=') ? { ...args[i], value: v.slice(8) } : args[++i];
      where = { ...where, cwd: changeDirectory(dir, where) };
      continue;
    }
    if (v === '-u' || v === '--unset') {
      i++;
      continue;
    }
    if (v.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(v)) continue;
    break;
  }
  if (i >= args.length) {
    st.findings.push({
      action: 'deny',
      reason: 'env: printing the environment (a secret in a variable not named like one would go to the model)',
      command: 'env',
    });
    return;
  }
  const saved = st.where;
  st.where = where;
  try {
    judgeWords(st, args.slice(i), node, depth + 1);
  } finally {
    st.where = saved;
  }
}

/** `bash -c TEXT` is parsed as shell; `bash <(…)`, `curl … | bash` and here-docs are judged by where the script comes from. */
function judgeShell(st: State, args: ShellWord[], node: SyntaxNode, depth: number, add: (v: Verdict[]) => void, shown: string): void {
  let commandText = false;
  let i = 0;
  for (; i < args.length; i++) {
    const v = args[i].value;
    if (v === undefined) break; // the operand (a process substitution, `"$X"`…), judged below
    if (v === '--' || v === '-') {
      i++;
      break;
    }
    if (v === '-o' || v === '+o' || v === '-O' || v === '+O' || v === '--rcfile' || v === '--init-file') {
      i++;
      continue;
    }
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(v)) commandText = true;
    if (!v.startsWith('-') && !v.startsWith('+')) break;
  }
  const operand = args[i];
  if (commandText) {
    if (!operand) return;
    if (operand.value === undefined) {
      return add([
        containsDownloader(operand.node)
          ? { action: 'deny', reason: 'running a downloaded script' }
          : { action: 'ask', reason: `a shell command known only when it runs (${operand.text})` },
      ]);
    }
    return analyseText(st, operand.value, depth + 1, shown);
  }
  if (operand) {
    if (operand.node.type === 'process_substitution') add([judgeGeneratedScript(operand.node)]);
    else if (operand.value === undefined)
      add([{ action: 'ask', reason: `a shell script or option known only when it runs (${operand.text})` }]);
    else add(judgeScriptFile(st, operand)); // a script file of the workspace's own, unless just downloaded
    return;
  }
  const sources = stdinSources(node);
  if (sources.downloads) return add([{ action: 'deny', reason: 'piping a download into a shell' }]);
  for (const text of sources.texts) analyseText(st, text, depth + 1, shown);
  if (sources.unknown.length > 0)
    add([{ action: 'ask', reason: `a shell reading commands from the output of \`${excerpt(sources.unknown.join(' | '))}\`` }]);
}

/** `find … -exec CMD {} ;` runs CMD; `find DIR -delete` deletes recursively. */
function judgeFind(st: State, args: ShellWord[], node: SyntaxNode, depth: number, add: (v: Verdict[]) => void): void {
  const start = args.findIndex((a) => a.value === undefined || /^[-(!]/.test(a.value));
  const roots = start < 0 ? args : args.slice(0, start);
  if (args.some((a) => a.value === '-delete')) {
    for (const root of roots.length ? roots : [{ value: '.', text: '.', node }]) {
      const verdict = judgeRecursiveDelete(root.value, root.text, st.where);
      if (verdict) add([verdict]);
    }
  }
  for (let i = 0; i < args.length; i++) {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(args[i].value ?? '')) continue;
    const end = args.findIndex((a, k) => k > i && (a.value === ';' || a.value === '+'));
    const command = args.slice(i + 1, end < 0 ? undefined : end).map((a) => (a.value === '{}' ? { ...a, value: undefined } : a));
    judgeWords(st, command, node, depth + 1);
    if (end < 0) break;
    i = end;
  }
}
