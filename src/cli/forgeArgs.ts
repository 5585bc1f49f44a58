import { parseArgs } from 'node:util';

/** `ralph gate`, `ralph ci init`, `ralph remote run|status`: the verbs of running tasks on the forge. */
export const FORGE_USAGE = `  gate [--base SHA] [--task ID] [--json]
                                     run the required gates with integrity against the base commit (in a
                                     pull_request / merge_group workflow the event's base by default);
                                     exit 0 pass · 1 fail · 2 usage or configuration error
  ci init [--force] [--runs-on LABEL] [--max-parallel N] [--node VERSION]
                                     write .github/workflows/ralph.yml (each task a job) and
                                     ralph-checks.yml (ralph gate on pull_request and merge_group);
                                     existing files are kept unless --force
  remote run [--tasks ID,ID…] [--detach] [--json]
                                     dispatch the ready tasks to GitHub Actions, then follow their jobs, pull
                                     requests and merge-queue entries until each is merged or failed; a task
                                     whose dependency is not merged yet is dispatched once it is
        --detach                     dispatch and return without following
  remote status [--json]             where each remote task stands (queued, running, PR open, in merge
                                     queue, merged, failed), read from GitHub now
        The token: GITHUB_TOKEN, else GH_TOKEN, else the GitHub CLI's (gh auth token).`;

export type ForgeCommand =
  | { kind: 'gate'; workspace: string; base?: string; taskId?: string; json: boolean }
  | { kind: 'ci.init'; workspace: string; force: boolean; runsOn?: string; maxParallel?: number; node?: string }
  | { kind: 'remote.run'; workspace: string; tasks?: string[]; detach: boolean; json: boolean }
  | { kind: 'remote.status'; workspace: string; json: boolean };

/** A malformed forge command; the CLI turns it into its usage error. */
export class ForgeUsageError extends Error {}

const OPTIONS = {
  workspace: { type: 'string' },
  json: { type: 'boolean' },
  base: { type: 'string' },
  task: { type: 'string' },
  force: { type: 'boolean' },
  'runs-on': { type: 'string' },
  'max-parallel': { type: 'string' },
  node: { type: 'string' },
  tasks: { type: 'string', multiple: true },
  detach: { type: 'boolean' },
} as const;

type Option = keyof typeof OPTIONS;

const VERBS: Record<string, { options: Option[]; positionals: number }> = {
  gate: { options: ['base', 'task', 'json'], positionals: 1 },
  'ci init': { options: ['force', 'runs-on', 'max-parallel', 'node'], positionals: 2 },
  'remote run': { options: ['tasks', 'detach', 'json'], positionals: 2 },
  'remote status': { options: ['json'], positionals: 2 },
};

/** The forge command `argv` names, or undefined when it is another command. */
export function parseForgeCommand(argv: readonly string[], cwd: string): ForgeCommand | undefined {
  const loose = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: false });
  const [first, second] = loose.positionals;
  if (first !== 'gate' && first !== 'ci' && first !== 'remote') return undefined;
  const verb = first === 'gate' ? 'gate' : `${first} ${second ?? ''}`;
  const spec = VERBS[verb];
  if (!spec)
    throw new ForgeUsageError(
      first === 'ci' ? 'unknown ci command: use ralph ci init' : 'unknown remote command: use ralph remote run or ralph remote status',
    );
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new ForgeUsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const extra = Object.keys(values).filter((key) => key !== 'workspace' && !spec.options.includes(key as Option));
  if (extra.length > 0) throw new ForgeUsageError(`option ${extra.map((k) => `--${k}`).join(', ')} does not apply to ralph ${verb}`);
  if (positionals.length > spec.positionals) throw new ForgeUsageError(`unexpected argument "${positionals[spec.positionals]}"`);
  const workspace = values.workspace ?? cwd;
  switch (verb) {
    case 'gate':
      if (values.base !== undefined && !/^[^\s-][^\s]*$/.test(values.base))
        throw new ForgeUsageError(`--base must be a commit (sha, branch or tag), got "${values.base}"`);
      return {
        kind: 'gate',
        workspace,
        ...(values.base ? { base: values.base } : {}),
        ...(values.task ? { taskId: values.task } : {}),
        json: values.json ?? false,
      };
    case 'ci init':
      return {
        kind: 'ci.init',
        workspace,
        force: values.force ?? false,
        ...(values['runs-on'] ? { runsOn: values['runs-on'] } : {}),
        ...(values['max-parallel'] !== undefined ? { maxParallel: positiveInt(values['max-parallel'], '--max-parallel') } : {}),
        ...(values.node ? { node: values.node } : {}),
      };
    case 'remote run': {
      const tasks = (values.tasks ?? [])
        .flatMap((t) => t.split(','))
        .map((t) => t.trim())
        .filter(Boolean);
      return {
        kind: 'remote.run',
        workspace,
        ...(tasks.length > 0 ? { tasks } : {}),
        detach: values.detach ?? false,
        json: values.json ?? false,
      };
    }
    default:
      return { kind: 'remote.status', workspace, json: values.json ?? false };
  }
}

function positiveInt(text: string, name: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 256)
    throw new ForgeUsageError(`${name} must be a whole number from 1 to 256, got "${text}"`);
  return value;
}
