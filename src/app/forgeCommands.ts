import * as vscode from 'vscode';
import { loadConfig } from '../core/config/service';
import { errorMessage } from '../core/errors';
import { connectForge } from '../core/forge/connect';
import { RemoteFollower } from '../core/forge/follower';
import { remoteActive } from '../core/forge/remoteTask';
import { tokenAuth } from '../core/forge/taskState';
import { environmentToken, type ForgeToken, type ForgeTokenSource } from '../core/forge/token';
import { DEFAULT_WORKFLOW_OPTIONS, GATE_CHECK_NAME, writeWorkflows } from '../core/forge/workflows';
import { runGit } from '../core/git/gitExec';
import type { RalphPaths } from '../core/paths';
import type { TaskStore } from '../core/tasks/store';
import type { Logger } from '../core/ports';
import { taskIdOf } from './taskCommands';

export interface ForgeCommandServices {
  paths: RalphPaths;
  store: TaskStore;
  logger: Logger;
}

/** GitHub's scopes for dispatching workflows and opening pull requests. */
const SCOPES = ['repo', 'workflow'];

/**
 * The editor's token: VS Code's GitHub session (asked silently first; on the person's command
 * it may sign in), else what the CLI would use (GITHUB_TOKEN, GH_TOKEN, gh). Kept in memory.
 */
export function editorToken(interactive: boolean): ForgeTokenSource {
  return async (): Promise<ForgeToken> => {
    const silent = await vscode.authentication.getSession('github', SCOPES, { silent: true }).then(
      (s) => s,
      () => undefined,
    );
    if (silent) return { value: silent.accessToken, source: `VS Code's GitHub session (${silent.account.label})` };
    try {
      return await environmentToken()();
    } catch (error) {
      if (!interactive) throw error;
      const session = await vscode.authentication.getSession('github', SCOPES, { createIfNone: true });
      return { value: session.accessToken, source: `VS Code's GitHub session (${session.account.label})` };
    }
  };
}

/** *Ralph: Set Up GitHub Actions*, *Ralph: Run Tasks on GitHub Actions*, *Ralph: Open on GitHub*. */
export class ForgeCommands implements vscode.Disposable {
  private following: Promise<void> | undefined;
  private disposed = false;

  constructor(private readonly s: ForgeCommandServices) {}

  async setUp(): Promise<{ file: string; state: string }[]> {
    const config = await loadConfig(this.s.paths);
    const options = { ...DEFAULT_WORKFLOW_OPTIONS, workflow: config.forge.workflow };
    let written = await writeWorkflows(this.s.paths.workspace, config, options, false);
    const kept = written.filter((w) => w.state === 'kept');
    if (kept.length > 0) {
      const names = kept.map((w) => vscode.workspace.asRelativePath(w.file)).join(', ');
      const answer = await vscode.window.showWarningMessage(`Ralph: ${names} exist${kept.length === 1 ? 's' : ''} and differ${kept.length === 1 ? 's' : ''} from what Ralph would write.`, { modal: true }, 'Replace');
      if (answer === 'Replace') written = await writeWorkflows(this.s.paths.workspace, config, options, true);
    }
    const summary = written.map((w) => `${vscode.workspace.asRelativePath(w.file)} ${w.state}`).join(', ');
    this.s.logger.info(`GitHub Actions set-up: ${summary}`);
    void vscode.window.showInformationMessage(`Ralph: ${summary}. On GitHub: the secret ${config.llm.apiKeyEnv}, auto-merge allowed, and a ruleset requiring a merge queue and the check "${GATE_CHECK_NAME}". Commit and push the workflows and .ralph/.`);
    const first = written.find((w) => w.state !== 'kept');
    if (first) await vscode.window.showTextDocument(vscode.Uri.file(first.file), { preview: true });
    return written;
  }

  /** Dispatches the ready tasks (or the one given: a Retry) and follows them until the forge holds none. */
  async run(arg?: unknown): Promise<string[]> {
    const only = taskIdOf(arg);
    const follower = await this.follower(true);
    const ids = await follower.dispatch(only ? [only] : undefined);
    if (ids.length === 0 && !(await follower.pending())) {
      void vscode.window.showInformationMessage(only ? `Ralph: ${only} is not ready to run on GitHub Actions.` : 'Ralph: no ready tasks to run on GitHub Actions.');
      return [];
    }
    if (ids.length > 0) void vscode.window.showInformationMessage(`Ralph: ${ids.join(', ')} dispatched to GitHub Actions.`);
    this.follow(follower);
    return ids;
  }

  /** Follows the remote tasks of the store (after a reload, say) when the forge still holds some. */
  async resume(): Promise<void> {
    if ((await this.s.store.list()).some((t) => remoteActive(t.remote))) this.follow(await this.follower(false));
  }

  async open(arg?: unknown): Promise<boolean> {
    const id = taskIdOf(arg);
    const task = id ? await this.s.store.get(id) : undefined;
    if (!task?.remote) {
      void vscode.window.showInformationMessage('Ralph: that task has not run on GitHub Actions.');
      return false;
    }
    return vscode.env.openExternal(vscode.Uri.parse(task.remote.url));
  }

  dispose(): void {
    this.disposed = true;
  }

  private follow(follower: RemoteFollower): void {
    if (this.following) return;
    this.following = (async () => {
      const pollMs = (await loadConfig(this.s.paths)).forge.pollSeconds * 1000;
      while (!this.disposed && (await follower.pending())) {
        await new Promise((resolve) => setTimeout(resolve, pollMs));
        if (this.disposed) break;
        await follower.step().catch((error) => this.s.logger.warn(`following the GitHub Actions tasks: ${errorMessage(error)}`));
      }
    })().finally(() => {
      this.following = undefined;
    });
  }

  private async follower(interactive: boolean): Promise<RemoteFollower> {
    const { paths, store, logger } = this.s;
    const config = await loadConfig(paths);
    const { forge, token } = await connectForge(paths.workspace, config, editorToken(interactive));
    const remoteUrl = (await runGit(paths.workspace, ['remote', 'get-url', config.forge.remote])).stdout.trim();
    return new RemoteFollower({ workspace: paths.workspace, paths, config, store, forge, auth: tokenAuth(remoteUrl, token), say: (line) => logger.info(line) });
  }
}
