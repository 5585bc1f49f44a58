import { promises as fs } from 'node:fs';
import { readTextIfExists } from '../util/atomicWrite';

/** What a GitHub Actions job tells a step through its environment (the parts Ralph uses). */
export interface ActionsEnv {
  /** `GITHUB_ACTIONS=true`: this process runs as a step of a job. */
  inActions: boolean;
  repository?: string;
  serverUrl: string;
  runId?: string;
  runAttempt?: string;
  /** The job's page, when the run is known. */
  runUrl?: string;
  /** The ref the workflow runs on (`main`). */
  refName?: string;
  eventName?: string;
  /** The event payload (`GITHUB_EVENT_PATH`), parsed; `{}` when absent or unreadable. */
  event: Record<string, unknown>;
  outputFile?: string;
  summaryFile?: string;
}

export async function readActionsEnv(env: NodeJS.ProcessEnv = process.env): Promise<ActionsEnv> {
  const serverUrl = (env.GITHUB_SERVER_URL ?? 'https://github.com').replace(/\/+$/, '');
  let event: Record<string, unknown> = {};
  const text = env.GITHUB_EVENT_PATH ? await readTextIfExists(env.GITHUB_EVENT_PATH).catch(() => undefined) : undefined;
  if (text) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object') event = parsed as Record<string, unknown>;
    } catch {
      // an unreadable payload is no payload: every value it would give has another source
    }
  }
  return {
    inActions: env.GITHUB_ACTIONS === 'true',
    ...(env.GITHUB_REPOSITORY ? { repository: env.GITHUB_REPOSITORY } : {}),
    serverUrl,
    ...(env.GITHUB_RUN_ID
      ? {
          runId: env.GITHUB_RUN_ID,
          runUrl: `${serverUrl}/${env.GITHUB_REPOSITORY ?? ''}/actions/runs/${env.GITHUB_RUN_ID}${env.GITHUB_RUN_ATTEMPT ? `/attempts/${env.GITHUB_RUN_ATTEMPT}` : ''}`,
        }
      : {}),
    ...(env.GITHUB_RUN_ATTEMPT ? { runAttempt: env.GITHUB_RUN_ATTEMPT } : {}),
    ...(env.GITHUB_REF_NAME ? { refName: env.GITHUB_REF_NAME } : {}),
    ...(env.GITHUB_EVENT_NAME ? { eventName: env.GITHUB_EVENT_NAME } : {}),
    event,
    ...(env.GITHUB_OUTPUT ? { outputFile: env.GITHUB_OUTPUT } : {}),
    ...(env.GITHUB_STEP_SUMMARY ? { summaryFile: env.GITHUB_STEP_SUMMARY } : {}),
  };
}

/** A string input of the workflow_dispatch event (`inputs.<name>`). */
export function eventInput(actions: ActionsEnv, name: string): string | undefined {
  const inputs = actions.event.inputs;
  const value = inputs && typeof inputs === 'object' ? (inputs as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** The base commit of a pull_request or merge_group event: what `ralph gate` compares with. */
export function eventBase(actions: ActionsEnv): string | undefined {
  const pr = actions.event.pull_request as { base?: { sha?: unknown } } | undefined;
  const group = actions.event.merge_group as { base_sha?: unknown } | undefined;
  const sha = pr?.base?.sha ?? group?.base_sha;
  return typeof sha === 'string' && /^[0-9a-f]{7,64}$/i.test(sha) ? sha : undefined;
}

/** The head branch of a pull_request event (`ralph/T-001`), or the merge group's PR head. */
export function eventHeadRef(actions: ActionsEnv, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const pr = actions.event.pull_request as { head?: { ref?: unknown } } | undefined;
  const ref = env.GITHUB_HEAD_REF || (typeof pr?.head?.ref === 'string' ? pr.head.ref : undefined);
  if (ref) return ref;
  // merge groups test on gh-readonly-queue/<base>/pr-<n>-<sha>: no task branch to read
  return undefined;
}

/**
 * Appends `name=value` lines to `$GITHUB_OUTPUT` (multi-line values in the heredoc form the
 * runner documents, with a delimiter that cannot occur in the value).
 */
export async function writeOutputs(actions: ActionsEnv, outputs: Record<string, string>): Promise<void> {
  if (!actions.outputFile) return;
  const lines: string[] = [];
  for (const [name, value] of Object.entries(outputs)) {
    if (!value.includes('\n')) lines.push(`${name}=${value}`);
    else {
      let delimiter = 'RALPH_EOF';
      while (value.includes(delimiter)) delimiter += '_';
      lines.push(`${name}<<${delimiter}`, value, delimiter);
    }
  }
  await fs.appendFile(actions.outputFile, `${lines.join('\n')}\n`);
}

/** Appends markdown to the job summary (`$GITHUB_STEP_SUMMARY`, 1 MiB at most per step). */
export async function writeSummary(actions: ActionsEnv, markdown: string): Promise<void> {
  if (!actions.summaryFile) return;
  const limit = 1000 * 1024;
  await fs.appendFile(actions.summaryFile, `${markdown.length > limit ? `${markdown.slice(0, limit)}\n\n… (cut)` : markdown}\n`);
}
