import * as path from 'node:path';
import { insideRoot, type PathContext, type PathVerdict, resolvePath } from './commandPaths';
import type { ShellWord } from './shellWords';

type Verdict = NonNullable<PathVerdict>;

/**
 * Credentials a command must not read, outside the sandbox as much as inside it (macOS, Windows,
 * `commands.sandbox: "off"`): key and token stores under any home directory, and the
 * environment of running processes. A folder named here is refused with everything in it;
 * a file, itself. Inside the workspace such a name is the project's own (its `.npmrc`).
 */
export const CREDENTIAL_DIRS = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.kube',
  '.azure',
  '.password-store',
  '.config/gh',
  '.config/gcloud',
  '.config/hub',
  '.docker',
  '.local/share/keyrings',
  'Library/Keychains',
  '.terraform.d',
];
export const CREDENTIAL_FILES = [
  '.netrc',
  '_netrc',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pypirc',
  '.git-credentials',
  '.config/git/credentials',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.vault-token',
  '.pgpass',
  '.my.cnf',
  '.boto',
  '.s3cfg',
];
const SYSTEM_SECRETS = ['/etc/shadow', '/etc/gshadow', '/etc/sudoers', '/etc/ssh'];
/** `/proc/<pid>/environ` (and a task's): every variable of a process, secrets the scrubbing removed from the command included. */
const PROC_ENVIRON = /^\/proc\/[^/]+(?:\/task\/[^/]+)?\/environ$/;

/** The same names as text, for words whose value is known only when they run (`$HOME/.ssh/id_rsa`). */
const MENTIONED = new RegExp(
  `(?:^|[/~"'\\s=:])(?:${[...CREDENTIAL_DIRS, ...CREDENTIAL_FILES].map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})(?:$|[/"'\\s])|/proc/[^\\s]*/environ\\b|/etc/(?:g?shadow|sudoers)\\b`,
);

/** Which credential store `abs` is in, or undefined. */
export function credentialOf(abs: string): string | undefined {
  if (PROC_ENVIRON.test(abs)) return 'the environment of a process';
  if (SYSTEM_SECRETS.some((s) => abs === s || abs.startsWith(`${s}/`))) return abs;
  const segments = abs.split(path.sep).filter(Boolean);
  for (let i = 0; i < segments.length; i++) {
    const rest = segments.slice(i).join('/');
    for (const dir of CREDENTIAL_DIRS) if (rest === dir || rest.startsWith(`${dir}/`)) return `~/${dir}`;
    for (const file of CREDENTIAL_FILES) if (rest === file) return `~/${file}`;
  }
  return undefined;
}

/**
 * A word that names a credential outside the workspace, as a path (resolved from where the
 * command runs: `cd ~ && cat .ssh/id_rsa` too) or inside an option (`--key=~/.ssh/id_rsa`,
 * `if=/root/.netrc`) or an interpreter's program (`python3 -c "open('/root/.ssh/id_rsa')"`). A word known only when it runs is refused when its text names one
 * (`"$HOME/.aws/credentials"`), and asked about when it is a path under a home directory.
 */
export function judgeCredentialWord(
  word: Pick<ShellWord, 'value' | 'text'>,
  where: PathContext,
  options: { code?: boolean } = {},
): Verdict | undefined {
  if (word.value === undefined) {
    if (MENTIONED.test(word.text))
      return {
        action: 'deny',
        reason: `reading credentials (${word.text}): keys, tokens and other processes' environments are not the agent's to read`,
      };
    if (/^["']?(?:~[^/\s]*|\$\{?HOME\}?|\/home|\/root|\/Users)\/./.test(word.text) || /^["']?\/proc\//.test(word.text))
      return { action: 'ask', reason: `a path under a home directory known only when it runs (${word.text}); it could be a credential` };
    return undefined;
  }
  // prose (a commit message naming ~/.npmrc) is not a read; one word, or an interpreter's program text, is looked into
  const candidates = options.code || !/\s/.test(word.value) ? pathsIn(word.value) : [word.value];
  for (const candidate of candidates) {
    const abs = resolvePath(candidate, where);
    if (abs === undefined) {
      if (MENTIONED.test(candidate))
        return { action: 'ask', reason: `${word.text} names a credential store after changing to a directory known only when it runs` };
      continue;
    }
    if (insideRoot(abs, where.root) !== undefined) continue; // the project's own files
    const store = credentialOf(abs);
    if (store)
      return {
        action: 'deny',
        reason: `reading credentials (${word.text} is in ${store}): keys, tokens and other processes' environments are not the agent's to read`,
      };
  }
  return undefined;
}

/** The word itself, and every path inside it after `=`, `:` or `,` or starting with `/` or `~/`. */
function pathsIn(value: string): string[] {
  const found = new Set<string>([value]);
  for (const part of value.split(/[=:,]/).slice(1)) if (part) found.add(part);
  // a path starts a word or follows `=`, `:`, `,`, a quote, `(` or `@` (curl's @file): `src/../x` is not `/../x`
  for (const match of value.matchAll(/(?<=^|[\s'"=:,(@])(?:~\/|\/)[^\s'"=:,;|&<>()]+/g)) found.add(match[0]);
  return [...found].filter((p) => p.length > 0 && p.length < 4096);
}

/** Commands that print the whole environment (secret-named variables are scrubbed, but not every secret is so named). */
export function judgeEnvironmentDump(name: string, args: readonly ShellWord[]): Verdict | undefined {
  const values = args.map((a) => a.value);
  const dump: Verdict = {
    action: 'deny',
    reason: `${name}: printing the environment (a secret in a variable not named like one would go to the model)`,
  };
  if (name === 'printenv') return dump;
  if (
    (name === 'export' || name === 'declare' || name === 'typeset') &&
    (values.length === 0 || values.every((v) => v !== undefined && /^-[a-zA-Z]*[px][a-zA-Z]*$/.test(v)))
  )
    return dump;
  if (name === 'set' && values.length === 0) return dump;
  if (name === 'compgen' && values.some((v) => v === '-e' || v === '-v' || v === '-A')) return dump;
  return undefined;
}

/** Tools that hand out the credentials they keep (`gh auth token`, `git credential fill`, `aws configure get`). */
export function judgeCredentialTool(name: string, args: readonly ShellWord[]): Verdict | undefined {
  const words = args.map((a) => a.value ?? '');
  const has = (...seq: string[]) => seq.every((w, k) => words[k] === w);
  const deny = (what: string): Verdict => ({ action: 'deny', reason: `${what}: reading credentials` });
  if (name === 'gh' && (has('auth', 'token') || (has('auth', 'status') && (words.includes('--show-token') || words.includes('-t')))))
    return deny('gh auth token');
  if (name === 'aws' && (has('configure', 'get') || has('configure', 'export-credentials') || has('sts', 'get-session-token')))
    return deny(`aws ${words.slice(0, 2).join(' ')}`);
  if (
    (name === 'npm' || name === 'pnpm' || name === 'yarn') &&
    words[0] === 'config' &&
    words.some((w) => /_auth|authtoken|_password|token/i.test(w))
  )
    return deny(`${name} config of an auth token`);
  if (name === 'security' && words.some((w) => /^(?:find|dump)-(?:generic|internet)-password$|^dump-keychain$/.test(w)))
    return deny('the macOS keychain');
  if (name === 'secret-tool' && (words[0] === 'lookup' || words[0] === 'search')) return deny('the desktop keyring');
  if (/^git-credential(?:-.+)?$/.test(name)) return deny(name);
  return undefined;
}
