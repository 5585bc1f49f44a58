import {
  judgeRecursiveDelete,
  judgeWrite as judgeWriteAt,
  type PathContext,
  type PathVerdict,
  resolvePath,
  insideRoot,
} from './commandPaths';
import { judgeCredentialTool, judgeCredentialWord, judgeEnvironmentDump } from './credentialRules';
import { judgeGitHistory } from './gitHistoryRules';
import type { ShellWord } from './shellWords';

/** `confinable`: an ask the sandbox makes moot (a write to a path known only at run time). */
export type Verdict = { action: 'deny' | 'ask'; reason: string; confinable?: true };

/** One simple command after wrappers are taken off: `name` is the bare command word. */
export interface SimpleCommand {
  name: string;
  args: ShellWord[];
}

const PRIVILEGE = new Set(['sudo', 'doas', 'su', 'pkexec', 'runuser']);
const POWER = new Set(['shutdown', 'reboot', 'poweroff', 'halt']);
/** Commands whose every path argument is a file they create, change or remove. */
const WRITES_ALL = new Set(['tee', 'touch', 'mkdir', 'truncate', 'rmdir', 'unlink', 'shred', 'mv', 'ln', 'mkfifo']);
const WRITES_AFTER_FIRST = new Set(['chmod', 'chown', 'chgrp']);
const WRITES_LAST = new Set(['cp', 'install', 'rsync', 'scp']);

/** git options that come before the subcommand and take a value (as the next word or after `=`). */
const GIT_VALUE_OPTIONS = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--config-env',
  '--super-prefix',
  '--exec-path',
  '--attr-source',
  '--list-cmds',
]);
const GIT_FLAG_OPTIONS = new Set([
  '--no-pager',
  '-p',
  '--paginate',
  '-P',
  '--bare',
  '--no-replace-objects',
  '--literal-pathspecs',
  '--glob-pathspecs',
  '--noglob-pathspecs',
  '--icase-pathspecs',
  '--no-optional-locks',
  '--no-advice',
  '--html-path',
  '--man-path',
  '--info-path',
]);
/** Configuration that makes git run a program or read more configuration. */
const GIT_RISKY_KEY =
  /^(?:core\.(?:hookspath|fsmonitor|pager|editor|sshcommand|askpass|gitproxy|worktree|attributesfile|excludesfile)|alias\..*|include\..*|includeif\..*|diff\.external|pager\..*|sequence\.editor|gpg\..*program|credential\..*|.*\.(?:textconv|command|cmd|program|process|clean|smudge|helper|receivepack|uploadpack))$/i;

const PACKAGE_MANAGERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);
const PM_VALUE_OPTIONS = new Set([
  '--registry',
  '--prefix',
  '-C',
  '--dir',
  '--cwd',
  '--filter',
  '-F',
  '--workspace',
  '-w',
  '--userconfig',
  '--cache',
  '--otp',
  '--tag',
  '--access',
  '--loglevel',
]);
const PM_SCRIPT_RUNNERS = new Set(['run', 'run-script', 'exec', 'x', 'dlx', 'test', 'start', 'create', 'init']);
/** Other publishers: the subcommand (or two) that uploads. */
const PUBLISHERS: Record<string, string[]> = {
  cargo: ['publish'],
  twine: ['upload'],
  gem: ['push'],
  poetry: ['publish'],
  uv: ['publish'],
  flit: ['publish'],
  hatch: ['publish'],
  dotnet: ['nuget', 'push'],
};

/** `written` hears of every file the command writes (undefined: a path known only at run time). */
export function judgeSimple(cmd: SimpleCommand, where: PathContext, written: (value: string | undefined) => void = () => {}): Verdict[] {
  const { name, args } = cmd;
  const out: Verdict[] = [];
  const add = (v: PathVerdict | Verdict | undefined) => {
    if (v) out.push(v);
  };
  const judgeWrite = (value: string | undefined, shown: string, at: PathContext, what: string): PathVerdict => {
    written(value);
    return judgeWriteAt(value, shown, at, what);
  };
  if (PRIVILEGE.has(name)) add({ action: 'deny', reason: `${name}: running as another user` });
  if (POWER.has(name)) add({ action: 'deny', reason: `${name}: stopping the machine` });
  if (/^mkfs(?:\..+)?$/.test(name) || name === 'mkswap' || name === 'fdisk' || name === 'parted')
    add({ action: 'deny', reason: 'writing a device or file system' });
  if (name === 'kill' && args.length >= 2 && args.at(-1)?.value === '-1')
    add({ action: 'deny', reason: 'killing every process of the user' });
  if (args.some((a) => a.value?.includes('.git/hooks')))
    add({ action: 'deny', reason: "touching git hooks (they would run on the orchestrator's own commits)" });

  if (name === 'rm') out.push(...judgeRm(args, where));
  else if (name === 'git') out.push(...judgeGit(args, where));
  else if (name === 'dd') {
    for (const a of args) {
      if (a.value?.startsWith('of=')) {
        const target = a.value.slice(3);
        add(
          target.startsWith('/dev/') && !/^\/dev\/(?:null|stdout|stderr)$/.test(target)
            ? { action: 'deny', reason: 'writing a device or file system' }
            : judgeWrite(target, a.text, where, 'writing'),
        );
      }
    }
  } else if (
    name === 'chmod' &&
    args.some((a) => a.value !== undefined && /(?:7{3}|a\+rwx|o\+w)$/.test(a.value)) &&
    positionals(args).some((a) => a.value !== undefined && resolvePath(a.value, where) === '/')
  ) {
    add({ action: 'deny', reason: 'opening the whole file system' });
  }

  if (WRITES_ALL.has(name)) for (const a of positionals(args)) add(judgeWrite(a.value, a.text, where, `${name}`));
  if (WRITES_AFTER_FIRST.has(name)) for (const a of positionals(args).slice(1)) add(judgeWrite(a.value, a.text, where, `${name}`));
  if (WRITES_LAST.has(name)) {
    const target = targetDirectory(args) ?? positionals(args).at(-1);
    if (target) add(judgeWrite(target.value, target.text, where, `${name}`));
  }
  if (name === 'sed' && args.some((a) => a.value !== undefined && (/^-[^-]*i/.test(a.value) || a.value.startsWith('--in-place')))) {
    const files = positionals(args).slice(
      args.some((a) => a.value === '-e' || a.value === '-f' || a.value?.startsWith('--expression')) ? 0 : 1,
    );
    for (const a of files) add(judgeWrite(a.value, a.text, where, 'sed -i'));
  }
  if (name === 'curl' || name === 'wget') {
    args.forEach((a, i) => {
      if (a.value === '-o' || a.value === '--output' || (name === 'wget' && (a.value === '-O' || a.value === '--output-document'))) {
        const file = args[i + 1];
        if (file) add(judgeWrite(file.value, file.text, where, `${name} ${a.value}`));
      }
    });
  }
  out.push(...judgePublish(name, args));
  // credentials, with or without the sandbox: a path to one anywhere in the words, a dump of the environment, a tool that hands them out
  const code = CODE_RUNNERS.has(name);
  for (const a of args) add(judgeCredentialWord(a, where, { code }));
  add(judgeEnvironmentDump(name, args));
  add(judgeCredentialTool(name, args));
  return out;
}

/** Commands whose arguments are program text: paths inside their words are looked into. */
const CODE_RUNNERS = new Set([
  'python',
  'python2',
  'python3',
  'node',
  'nodejs',
  'perl',
  'ruby',
  'php',
  'deno',
  'bun',
  'lua',
  'Rscript',
  'awk',
  'gawk',
  'mawk',
  'jq',
  'osascript',
  'pwsh',
  'powershell',
]);

function judgeRm(args: ShellWord[], where: PathContext): Verdict[] {
  const recursive = optionWords(args).some(
    (a) => a.value === '--recursive' || (a.value !== undefined && /^-[a-zA-Z]*[rR]/.test(a.value) && !a.value.startsWith('--')),
  );
  const targets = positionals(args);
  if (recursive && targets.length === 0)
    return [
      { action: 'deny', reason: 'recursive delete of (nothing named) (only build folders such as dist/ or node_modules/ may be removed)' },
    ];
  const out: Verdict[] = [];
  for (const t of targets) {
    const verdict = recursive ? judgeRecursiveDelete(t.value, t.text, where) : judgeWriteAt(t.value, t.text, where, 'deleting');
    if (verdict) out.push(verdict);
  }
  return out;
}

function judgeGit(args: ShellWord[], where: PathContext): Verdict[] {
  const out: Verdict[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const word = args[i].value;
    if (word === undefined) return [{ action: 'ask', reason: `git with an option known only when it runs (${args[i].text})` }];
    if (!word.startsWith('-')) break;
    const [option, inline] =
      word.startsWith('--') && word.includes('=')
        ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]
        : [word, undefined];
    if (GIT_FLAG_OPTIONS.has(option)) continue;
    if (option === '--version' || option === '--help' || option === '-h') return out;
    if (!GIT_VALUE_OPTIONS.has(option)) return [{ action: 'ask', reason: `git with an unknown option ${word}` }];
    const valueWord: Pick<ShellWord, 'value' | 'text'> | undefined = inline !== undefined ? { value: inline, text: word } : args[++i];
    if (!valueWord) return [{ action: 'ask', reason: `git ${option} without a value` }];
    const value = valueWord.value;
    if (option === '-c' || option === '--config-env') {
      const key = value?.split('=')[0];
      if (key === undefined || GIT_RISKY_KEY.test(key))
        out.push({ action: 'deny', reason: `git ${option} ${valueWord.text}: configuration that makes git run a program` });
    } else if (option === '-C' || option === '--git-dir' || option === '--work-tree') {
      const dir = value === undefined ? undefined : resolvePath(value, where);
      if (dir === undefined) out.push({ action: 'ask', reason: `git ${option} ${valueWord.text}: a repository known only when it runs` });
      else if (insideRoot(dir, where.root) === undefined)
        out.push({ action: 'ask', reason: `git ${option} ${valueWord.text}: a repository outside the workspace` });
      if (option === '-C' && dir !== undefined) where = { ...where, cwd: dir };
    } else if (option === '--exec-path' && value !== undefined) {
      out.push({ action: 'deny', reason: 'git --exec-path: runs git commands from another folder' });
    }
  }
  const sub = args[i];
  if (!sub) return out;
  if (sub.value === undefined) return [...out, { action: 'ask', reason: `git subcommand known only when it runs (${sub.text})` }];
  const rest = args.slice(i + 1);
  const values = rest.map((a) => a.value);
  const hasShort = (letter: string) => values.some((v) => v !== undefined && /^-[a-zA-Z]+$/.test(v) && v.includes(letter));
  const history = judgeGitHistory(sub.value, values);
  if (history) out.push(history);
  switch (sub.value) {
    case 'push': {
      const force =
        values.some(
          (v) =>
            v === undefined ||
            /^--(?:force|force-with-lease|force-if-includes|mirror|delete|prune)(?:=|$)/.test(v) ||
            v.startsWith('+') ||
            (v.startsWith(':') && v.length > 1),
        ) ||
        hasShort('f') ||
        hasShort('d');
      out.push({ action: 'ask', reason: force ? 'force-pushing' : 'pushing to a remote' });
      break;
    }
    case 'reset':
      if (values.some((v) => v === '--hard' || v === '--merge' || v === '--keep'))
        out.push({ action: 'ask', reason: 'discarding work in the repository' });
      break;
    case 'clean':
      if (values.some((v) => v === '--force') || hasShort('f')) out.push({ action: 'ask', reason: 'discarding work in the repository' });
      break;
    case 'checkout':
    case 'switch':
      if (values.some((v) => v === '--force' || v === '--discard-changes') || hasShort('f'))
        out.push({ action: 'ask', reason: 'discarding work in the repository' });
      break;
    case 'config':
      out.push(...judgeGitConfig(rest));
      break;
    case 'filter-branch':
    case 'filter-repo':
    case 'update-ref':
    case 'replace':
      out.push({ action: 'ask', reason: `git ${sub.value}: rewriting history or refs` });
      break;
  }
  return out;
}

function judgeGitConfig(args: ShellWord[]): Verdict[] {
  const values = args.map((a) => a.value);
  if (values.some((v) => v === undefined)) return [{ action: 'ask', reason: 'git config with a value known only when it runs' }];
  const words = values as string[];
  const reads = [
    '--get',
    '--get-all',
    '--get-regexp',
    '--get-urlmatch',
    '-l',
    '--list',
    'get',
    'list',
    '--show-origin',
    '--show-scope',
    '--name-only',
  ];
  const positional = words.filter((w) => !w.startsWith('-'));
  const modern = ['set', 'unset', 'rename-section', 'remove-section', 'edit'].includes(positional[0] ?? '');
  const writes =
    modern ||
    words.some((w) => /^--(?:unset|unset-all|add|replace-all|rename-section|remove-section|edit)$/.test(w) || w === '-e') ||
    (!words.some((w) => reads.includes(w)) && positional.length >= 2);
  if (!writes) return [];
  const key = modern ? positional[1] : positional[0];
  if (key === undefined || GIT_RISKY_KEY.test(key) || words.includes('--edit') || words.includes('-e'))
    return [{ action: 'deny', reason: `git config ${key ?? ''}: configuration that makes git run a program` }];
  return [{ action: 'ask', reason: 'changing the git configuration' }];
}

function judgePublish(name: string, args: ShellWord[]): Verdict[] {
  const positional: (string | undefined)[] = [];
  if (PACKAGE_MANAGERS.has(name)) {
    for (let i = 0; i < args.length; i++) {
      const v = args[i].value;
      if (v === '--') break;
      if (v !== undefined && v.startsWith('-')) {
        if (PM_VALUE_OPTIONS.has(v)) i++;
        continue;
      }
      positional.push(v);
    }
    const [sub] = positional;
    if (sub === 'publish' || sub === 'unpublish' || (!PM_SCRIPT_RUNNERS.has(sub ?? '') && positional.includes('publish'))) {
      return [{ action: 'ask', reason: 'publishing a package' }];
    }
    return [];
  }
  const words = PUBLISHERS[name];
  if (!words) return [];
  const given = positionals(args).map((a) => a.value);
  return words.every((w, k) => given[k] === w) ? [{ action: 'ask', reason: 'publishing a package' }] : [];
}

/** Arguments that are not options (everything after `--` counts). */
export function positionals(args: ShellWord[]): ShellWord[] {
  const out: ShellWord[] = [];
  let options = true;
  for (const a of args) {
    if (options && a.value === '--') {
      options = false;
      continue;
    }
    if (options && a.value !== undefined && a.value.startsWith('-') && a.value !== '-') continue;
    out.push(a);
  }
  return out;
}

function optionWords(args: ShellWord[]): ShellWord[] {
  const end = args.findIndex((a) => a.value === '--');
  return (end < 0 ? args : args.slice(0, end)).filter((a) => a.value?.startsWith('-'));
}

function targetDirectory(args: ShellWord[]): ShellWord | undefined {
  for (let i = 0; i < args.length; i++) {
    const v = args[i].value;
    if (v === '-t') return args[i + 1];
    if (v?.startsWith('--target-directory=')) return { ...args[i], value: v.slice('--target-directory='.length) };
  }
  return undefined;
}
