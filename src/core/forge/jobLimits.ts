import { parse } from 'yaml';
import type { RalphConfig } from '../config/schema';
import { parseConfigText } from '../config/load';
import { runGit } from '../git/gitExec';
import { jobTimeoutMinutes, MINUTES_INPUT } from './workflows';

/**
 * The dispatch's `minutes` input: the job's time limit from the configuration the job will run
 * with — `.ralph/config.json` on the target as pushed (`ref`), else this workspace's — so a raised
 * `loop.taskTimeoutMinutes` is not cut short by the limit written into the workflow at `ralph ci
 * init`. Sent only when the pushed workflow declares the input: GitHub refuses a dispatch with an
 * input its workflow does not declare (one written before the input existed).
 */
export async function minutesInput(workspace: string, ref: string, config: RalphConfig): Promise<Record<string, string>> {
  const workflow = await runGit(workspace, ['show', `${ref}:.github/workflows/${config.forge.workflow}`]);
  if (workflow.code !== 0 || !declaresInput(workflow.stdout, MINUTES_INPUT)) return {};
  const pushed = await runGit(workspace, ['show', `${ref}:.ralph/config.json`]);
  let jobConfig = config;
  try {
    if (pushed.code === 0) jobConfig = parseConfigText(pushed.stdout, `.ralph/config.json on ${ref}`);
  } catch {
    // a broken pushed configuration fails the job itself, with its own message; the limit is this workspace's
  }
  return { [MINUTES_INPUT]: String(jobTimeoutMinutes(jobConfig)) };
}

function declaresInput(workflowText: string, name: string): boolean {
  try {
    const doc = parse(workflowText) as { on?: { workflow_dispatch?: { inputs?: Record<string, unknown> } | null } } | null;
    const inputs = doc?.on?.workflow_dispatch?.inputs;
    return inputs !== undefined && inputs !== null && Object.hasOwn(inputs, name);
  } catch {
    return false;
  }
}
