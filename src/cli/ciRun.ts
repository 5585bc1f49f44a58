import type { RalphConfig } from '../core/config/schema';
import type { EventBus } from '../core/events';
import { runCiTask } from '../core/forge/ciTask';
import { connectForge } from '../core/forge/connect';
import { environmentToken } from '../core/forge/token';
import type { Ralph } from '../core/ralph';
import type { TaskStatus } from '../core/tasks/schema';
import type { CliCommand } from './args';
import type { CliIo } from './io';

/** What `ralph run --ci` changes in the usual run: the configuration, the end of a task, extra secrets, a look at the events. */
export interface RunHooks {
  config(loaded: RalphConfig): RalphConfig;
  /** COMPLETE leaves the task in_progress: the forge's merge queue decides when it is done. */
  awaitMerge: boolean;
  /** The forge token when it did not come from the environment (gh): redacted like the model key. */
  secretValues: string[];
  onBus(bus: EventBus): void;
}

type RunCommand = Extract<CliCommand, { kind: 'run' }>;

/** `--ci`, or `--task ID` inside a GitHub Actions job. */
export function isCiRun(command: RunCommand, env: NodeJS.ProcessEnv = process.env): boolean {
  return command.ci === true || (command.taskId !== undefined && env.GITHUB_ACTIONS === 'true');
}

/**
 * `ralph run --ci --task ID`: the task as a CI job (core/forge/ciTask.ts) around the usual run.
 * Exit codes as `ralph run`: 0 done (its pull request waits in the merge queue), 1 failed, timed
 * out or halted, 3 blocked or needs help, 2 usage or configuration.
 */
export async function runCiCommand(
  ralph: Ralph,
  command: RunCommand,
  io: CliIo,
  run: (hooks: RunHooks) => Promise<number>,
): Promise<number> {
  const taskId = command.taskId!;
  const { workspace } = ralph;
  const config = await ralph.config.load();
  let token = '';
  const result = await runCiTask({
    workspace,
    records: ralph,
    config,
    taskId,
    connect: async () => {
      const connection = await connectForge(workspace, config, environmentToken());
      token = connection.token;
      return connection;
    },
    log: (line) => io.err(line),
    runTask: async (runConfig, onIteration) => {
      let ended: { status: TaskStatus; reason: string } | undefined;
      const code = await run({
        config: () => runConfig,
        awaitMerge: true,
        secretValues: token ? [token] : [],
        onBus: (bus) => {
          bus.subscribe((event) => {
            if (event.type === 'iteration.finished' && event.taskId === taskId) onIteration();
            if (event.type === 'run.finished') {
              const mine = event.results.find((r) => r.taskId === taskId);
              ended = mine ? { status: mine.status, reason: event.reason } : undefined;
            }
          });
        },
      });
      return ended ?? { status: code === 0 ? 'done' : 'failed', reason: `the run ended with exit code ${code}` };
    },
  });
  io.out(
    `${taskId}: ${result.status}${result.pr ? ` — pull request #${result.pr.number}${result.pr.draft ? ' (draft)' : ''} ${result.pr.url}` : ''}`,
  );
  if (result.status === 'done') return 0;
  if (result.status === 'blocked' || result.status === 'needs_help') return 3;
  if (result.status === 'in_progress' || result.status === 'todo') return 0;
  return 1;
}
