import { openRalph } from '../core/ralph';
import { connectForge } from '../core/forge/connect';
import { RemoteFollower, stateWords } from '../core/forge/follower';
import { remoteActive } from '../core/tasks/remote';
import { tokenAuth } from '../core/forge/taskState';
import { environmentToken } from '../core/forge/token';
import { runGit } from '../core/git/gitExec';
import type { TaskStatus } from '../core/tasks/schema';
import type { TaskStore } from '../core/tasks/store';
import type { ForgeCommand } from './command';
import type { CliIo } from './io';

/** A follower of this workspace's remote tasks, with the CLI's token (GITHUB_TOKEN, GH_TOKEN, gh). */
async function follower(
  workspace: string,
  io: CliIo,
  quiet: boolean,
): Promise<{ follower: RemoteFollower; store: TaskStore; pollMs: number }> {
  const { paths, store, config: service } = openRalph(workspace);
  const config = await service.load();
  const { forge, token } = await connectForge(workspace, config, environmentToken());
  const remoteUrl = (await runGit(workspace, ['remote', 'get-url', config.forge.remote])).stdout.trim();
  const f = new RemoteFollower({
    workspace,
    paths,
    config,
    store,
    forge,
    auth: tokenAuth(remoteUrl, token),
    say: (line) => (quiet ? io.err(line) : io.out(line)),
  });
  return { follower: f, store, pollMs: config.forge.pollSeconds * 1000 };
}

/** `ralph remote run`: dispatch, then follow until the forge holds none of the tasks. */
export async function remoteRun(workspace: string, command: Extract<ForgeCommand, { kind: 'remote.run' }>, io: CliIo): Promise<number> {
  const { follower: f, store, pollMs } = await follower(workspace, io, command.json);
  const dispatched = await f.dispatch(command.tasks);
  if (dispatched.length === 0 && !(await f.pending())) {
    io.out(
      command.tasks
        ? `nothing to dispatch: ${command.tasks.join(', ')} ${command.tasks.length === 1 ? 'is' : 'are'} not ready (todo with its dependencies done, or failed/halted/blocked for a retry)`
        : 'no ready tasks to dispatch',
    );
    return 0;
  }
  if (command.detach) {
    io.out('dispatched; follow them with: ralph remote status');
    return 0;
  }
  const followed = new Set(dispatched);
  let stopped = false;
  const removeInterrupt = io.onInterrupt(() => {
    stopped = true;
    io.err('no longer following: the jobs go on on GitHub (ralph remote status, or ralph remote run to follow again)');
  });
  try {
    while (!stopped && (await f.pending())) {
      await sleep(pollMs, () => stopped);
      if (stopped) break;
      await f.step();
      // dependents dispatched once their dependency merged are followed too
      for (const t of await store.list()) if (remoteActive(t.remote)) followed.add(t.id);
    }
  } finally {
    removeInterrupt();
  }
  const tasks = (await store.list()).filter((t) => followed.has(t.id));
  if (command.json)
    io.out(
      JSON.stringify(
        tasks.map((t) => ({ id: t.id, status: t.status, remote: t.remote })),
        null,
        2,
      ),
    );
  return stopped ? 0 : exitCode(tasks.map((t) => t.status));
}

/** `ralph remote status`: every remote task, looked up on the forge now. */
export async function remoteStatus(
  workspace: string,
  command: Extract<ForgeCommand, { kind: 'remote.status' }>,
  io: CliIo,
): Promise<number> {
  const { follower: f, store } = await follower(workspace, io, command.json);
  await f.refresh();
  const tasks = (await store.list()).filter((t) => t.remote);
  if (command.json) {
    io.out(
      JSON.stringify(
        tasks.map((t) => ({ id: t.id, title: t.title, status: t.status, remote: t.remote })),
        null,
        2,
      ),
    );
    return 0;
  }
  if (tasks.length === 0) io.out('no task has run on the forge (ralph remote run dispatches the ready ones)');
  for (const t of tasks)
    io.out(
      `${t.id.padEnd(10)} ${stateWords(t.remote!.state).padEnd(26)} ${t.status.padEnd(11)} ${t.remote!.url}${t.remote!.detail ? `  (${t.remote!.detail})` : ''}`,
    );
  return 0;
}

function exitCode(statuses: TaskStatus[]): number {
  if (statuses.some((s) => s === 'failed' || s === 'timeout' || s === 'halted' || s === 'cancelled')) return 1;
  if (statuses.some((s) => s === 'blocked' || s === 'needs_help')) return 3;
  return 0;
}

/** Waits `ms`, looking every 100 ms whether to stop early (Ctrl-C). */
async function sleep(ms: number, stop: () => boolean): Promise<void> {
  const end = Date.now() + ms;
  while (!stop() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, Math.min(100, end - Date.now())));
}
