import type { PathVerdict } from './commandPaths';

type Verdict = NonNullable<PathVerdict>;

/**
 * git subcommands the rules know. Anything else is asked about: a user's alias (`git co -- .`
 * for `checkout`) or an external `git-<name>` program could stand for any of the commands below.
 */
const KNOWN = new Set([
  'add',
  'am',
  'annotate',
  'apply',
  'archive',
  'bisect',
  'blame',
  'branch',
  'bundle',
  'cat-file',
  'check-attr',
  'check-ignore',
  'check-mailmap',
  'check-ref-format',
  'checkout',
  'cherry',
  'cherry-pick',
  'clean',
  'clone',
  'column',
  'commit',
  'commit-graph',
  'commit-tree',
  'config',
  'count-objects',
  'describe',
  'diff',
  'diff-files',
  'diff-index',
  'diff-tree',
  'difftool',
  'fetch',
  'for-each-ref',
  'format-patch',
  'fsck',
  'gc',
  'get-tar-commit-id',
  'grep',
  'hash-object',
  'help',
  'init',
  'interpret-trailers',
  'log',
  'ls-files',
  'ls-remote',
  'ls-tree',
  'maintenance',
  'merge',
  'merge-base',
  'merge-file',
  'merge-tree',
  'mktag',
  'mktree',
  'mv',
  'name-rev',
  'notes',
  'pack-objects',
  'prune',
  'pull',
  'push',
  'range-diff',
  'read-tree',
  'rebase',
  'reflog',
  'remote',
  'repack',
  'replace',
  'rerere',
  'reset',
  'restore',
  'rev-list',
  'rev-parse',
  'revert',
  'rm',
  'shortlog',
  'show',
  'show-branch',
  'show-ref',
  'sparse-checkout',
  'stage',
  'stash',
  'status',
  'submodule',
  'switch',
  'symbolic-ref',
  'tag',
  'unpack-objects',
  'update-index',
  'update-ref',
  'var',
  'verify-commit',
  'verify-pack',
  'verify-tag',
  'version',
  'whatchanged',
  'worktree',
  'write-tree',
  'filter-branch',
  'filter-repo',
  'lfs',
  'credential',
  'credential-cache',
  'credential-store',
]);

/**
 * git commands that destroy history or uncommitted work — the user's and the orchestrator's
 * alike: they are asked about (a person approves each), sandbox or not. `values` are the words
 * after the subcommand (`undefined` where only known when it runs).
 */
export function judgeGitHistory(sub: string, values: readonly (string | undefined)[]): Verdict | undefined {
  if (!KNOWN.has(sub)) {
    return {
      action: 'ask',
      reason: `git ${sub}: not a git command the rules know (an alias or a git-${sub} program could stand for any command)`,
    };
  }
  const words = readWords(sub, values);
  const { has, short, ask, positional } = words;
  switch (sub) {
    case 'credential':
    case 'credential-cache':
    case 'credential-store':
      return { action: 'deny', reason: `git ${sub}: reading credentials` };
    case 'stash':
      // list and show only read; everything else hides or drops uncommitted work
      return ['list', 'show'].includes(positional[0] ?? '') ? undefined : ask('hiding or dropping uncommitted work (stash)');
    case 'commit':
      return has('--amend') ? ask('rewriting the last commit (--amend)') : undefined;
    case 'checkout':
      return judgeCheckout(words);
    case 'restore':
      return has('--staged', '-S') && !has('--worktree', '-W') ? undefined : ask('discarding uncommitted changes to files');
    case 'reset':
      return judgeReset(words);
    case 'rebase':
      return ask('rewriting history (rebase)');
    case 'reflog':
      return ['expire', 'delete', 'drop'].includes(positional[0] ?? '')
        ? ask('deleting reflog entries (the way back to lost commits)')
        : undefined;
    case 'gc':
      return has('--prune') ? ask('pruning unreachable commits now') : undefined;
    case 'prune':
    case 'repack':
      return sub === 'prune' || short('d') || has('-a', '-A') ? ask('removing unreachable objects') : undefined;
    case 'branch':
      return has('-D', '--force', '-M', '-C') || short('D') || short('f') || short('M') || short('C')
        ? ask('deleting or overwriting a branch by force')
        : undefined;
    case 'tag':
      return has('-d', '--delete', '-f', '--force') || short('d') || short('f') ? ask('deleting or moving a tag') : undefined;
    case 'merge':
    case 'cherry-pick':
    case 'revert':
      return has('--abort', '--quit') ? ask('abandoning a merge in progress (the orchestrator may have started it)') : undefined;
    case 'worktree':
      return ['remove', 'prune', 'move'].includes(positional[0] ?? '')
        ? ask("removing or moving a worktree (Ralph's own are under .ralph/worktrees)")
        : undefined;
    case 'symbolic-ref':
      return positional.length >= 2 || has('-d', '--delete') ? ask('moving HEAD') : undefined;
    case 'update-index':
      return has('--assume-unchanged', '--skip-worktree', '--force-remove') ? ask('hiding changes from git') : undefined;
    case 'notes':
      return ['remove', 'prune'].includes(positional[0] ?? '') ? ask('removing notes') : undefined;
  }
  return undefined;
}

/** The words after a git subcommand, read for the rules. */
interface GitWords {
  values: readonly (string | undefined)[];
  /** The words known before the command runs. */
  known: string[];
  positional: string[];
  /** One of these options is given (a long one also as `--name=value`). */
  has(...options: string[]): boolean;
  /** A cluster of short options (`-fd`) holds this letter. */
  short(letter: string): boolean;
  ask(what: string): Verdict;
}

function readWords(sub: string, values: readonly (string | undefined)[]): GitWords {
  const known = values.filter((v): v is string => v !== undefined);
  return {
    values,
    known,
    positional: positionalsOf(known),
    has: (...options) => known.some((v) => options.includes(v) || options.some((o) => o.startsWith('--') && v.startsWith(`${o}=`))),
    short: (letter) => known.some((v) => /^-[a-zA-Z]+$/.test(v) && v.includes(letter)),
    ask: (what) => ({ action: 'ask', reason: `git ${sub}: ${what}` }),
  };
}

function judgeCheckout({ values, known, positional, has, short, ask }: GitWords): Verdict | undefined {
  // a new branch where the work is: nothing lost; anything else may be files (`checkout -- .`, `checkout a.txt`) or another branch
  if (
    !values.includes(undefined) &&
    has('-b') &&
    !has('-B', '--orphan', '--force', '--patch', '-p') &&
    !short('f') &&
    !known.includes('--') &&
    positional.length <= 2
  ) {
    return undefined;
  }
  return ask('discarding uncommitted changes to files, or leaving the branch the task works on');
}

function judgeReset({ values, known, positional, has, ask }: GitWords): Verdict | undefined {
  if (has('--hard', '--merge', '--keep')) return ask('discarding work in the repository');
  // `git reset`, `git reset -- file`, `git reset HEAD file` unstage; any other target moves the branch back
  if (
    has('--soft', '--mixed') ||
    (positional[0] !== undefined &&
      positional[0] !== 'HEAD' &&
      !known.includes('--') &&
      /[~^@]|^[0-9a-f]{7,40}$|^(?:ORIG_HEAD|FETCH_HEAD)$/.test(positional[0]))
  ) {
    return ask('moving the branch back (commits dropped from it)');
  }
  return values.includes(undefined) ? ask('a target known only when it runs') : undefined;
}

/** Words that are not options (everything after `--` included). */
function positionalsOf(words: readonly string[]): string[] {
  const out: string[] = [];
  let options = true;
  for (const w of words) {
    if (options && w === '--') {
      options = false;
      continue;
    }
    if (options && w.startsWith('-')) continue;
    out.push(w);
  }
  return out;
}
