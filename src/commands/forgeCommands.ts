import * as vscode from 'vscode';
import type { ConfigService } from '../core/config/service';
import { errorMessage } from '../core/errors';
import { connectForge } from '../core/forge/connect';
import { RemoteFollower } from '../core/forge/follower';
import { remoteActive } from '../core/tasks/remote';
import { tokenAuth } from '../core/forge/taskState';
import { ForgeTokenError } from '../core/forge/token';
import { DEFAULT_WORKFLOW_OPTIONS, GATE_CHECK_NAME, writeWorkflows } from '../core/forge/workflows';
import { runGit } from '../core/git/gitExec';
import type { RalphPaths } from '../core/paths';
import type { Task } from '../core/tasks/schema';
import type { TaskStore } from '../core/tasks/store';
import type { Logger } from '../core/ports';
import type { Prompts } from '../ui/dialogs';
import { editorToken, TOKEN_HINT } from './editorToken';
import { taskIdOf } from './taskCommands';

export interface ForgeCommandServices {
  paths: RalphPaths;
  /** The workspace's one ConfigService (the façade's, core/ralph.ts). */
  config: ConfigService;
  store: TaskStore;
  logger: Logger;
  prompts: Prompts;
}

/** *Ralph: Set Up GitHub Actions*, *Ralph: Run Tasks on GitHub Actions*, *Ralph: Open on GitHub*. */
export class ForgeCommands implements vscode.Disposable {
  private following: Promise<void> | undefined;
  private disposed = false;

  constructor(private readonly s: ForgeCommandServices) {}

  async setUp(): Promise<{ file: string; state: string }[]> {
    const config = await this.s.config.load();
    const options = { ...DEFAULT_WORKFLOW_OPTIONS, workflow: config.forge.workflow };
    let written = await writeWorkflows(this.s.paths.workspace, config, options, false);
    const kept = written.filter((w) => w.state === 'kept');
    if (kept.length > 0) {
      const names = kept.map((w) => vscode.workspace.asRelativePath(w.file)).join(', ');
      const one = kept.length === 1;
      const replace = await this.s.prompts.confirm(
        `${names} exist${one ? 's' : ''} and differ${one ? 's' : ''} from what Ralph would write.`,
        `Replace ${one ? 'it' : 'them'} with Ralph's workflows? Your changes to ${one ? 'it' : 'them'} would be lost; Cancel keeps ${one ? 'it' : 'them'} as ${one ? 'it is' : 'they are'}.`,
        'Replace',
      );
      if (replace) written = await writeWorkflows(this.s.paths.workspace, config, options, true);
    }
    const summary = written.map((w) => `${vscode.workspace.asRelativePath(w.file)} ${w.state}`).join(', ');
    this.s.logger.info(`GitHub Actions set-up: ${summary}`);
    void vscode.window.showInformationMessage(
      `Ralph: ${summary}. On GitHub: the secret ${config.llm.apiKeyEnv}, auto-merge allowed, and a ruleset requiring a merge queue and the check "${GATE_CHECK_NAME}". Commit and push the workflows and .ralph/.`,
    );
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
      void vscode.window.showInformationMessage(
        only ? `Ralph: ${only} is not ready to run on GitHub Actions.` : 'Ralph: no ready tasks to run on GitHub Actions.',
      );
      return [];
    }
    if (ids.length > 0) void vscode.window.showInformationMessage(`Ralph: ${ids.join(', ')} dispatched to GitHub Actions.`);
    this.follow(follower);
    return ids;
  }

  /**
   * Follows the remote tasks of the store (after a reload, say) when the forge still holds some,
   * without asking for a sign-in at start-up; without a token it says so and offers the sign-in.
   */
  async resume(): Promise<void> {
    const held = (await this.s.store.list()).filter((t) => remoteActive(t.remote));
    if (held.length === 0) return;
    try {
      this.follow(await this.follower(false));
    } catch (error) {
      if (!(error instanceof ForgeTokenError)) throw error;
      this.s.logger.warn(`not following the GitHub Actions tasks: ${error.message}`);
      const signIn = 'Sign In and Follow';
      const many = held.length > 1;
      const answer = await vscode.window.showWarningMessage(
        `Ralph: ${held.map((t) => t.id).join(', ')} ${many ? 'run' : 'runs'} on GitHub Actions, but there is no GitHub token to follow ${many ? 'them' : 'it'}: ${TOKEN_HINT}.`,
        signIn,
      );
      if (answer === signIn)
        await this.follower(true).then(
          (f) => this.follow(f),
          (e: unknown) => void vscode.window.showErrorMessage(`Ralph: ${errorMessage(e)}`),
        );
    }
  }

  /** Opens the task's job or pull request (the task given, else the one picked among those that ran on the forge). */
  async open(arg?: unknown): Promise<boolean> {
    const id = taskIdOf(arg);
    const task = id ? await this.s.store.get(id) : await this.pickRemote();
    if (!task) return false;
    if (!task.remote) {
      void vscode.window.showInformationMessage(`Ralph: ${task.id} has not run on GitHub Actions.`);
      return false;
    }
    return vscode.env.openExternal(vscode.Uri.parse(task.remote.url));
  }

  private async pickRemote(): Promise<Task | undefined> {
    const ran = (await this.s.store.list()).filter((t) => t.remote);
    if (ran.length > 0) return this.s.prompts.pickTask(ran, 'Open which task on GitHub?');
    void vscode.window.showInformationMessage('Ralph: no task has run on GitHub Actions yet.');
    return undefined;
  }

  dispose(): void {
    this.disposed = true;
  }

  private follow(follower: RemoteFollower): void {
    if (this.following) return;
    this.following = (async () => {
      const pollMs = (await this.s.config.load()).forge.pollSeconds * 1000;
      while (!this.disposed && (await follower.pending())) {
        await new Promise((resolve) => setTimeout(resolve, pollMs));
        if (this.disposed) break;
        await follower.step().catch((error) => this.s.logger.warn(`following the GitHub Actions tasks: ${errorMessage(error)}`));
      }
    })()
      .catch((error) => this.s.logger.warn(`stopped following the GitHub Actions tasks: ${errorMessage(error)}`))
      .finally(() => {
        this.following = undefined;
      });
  }

  private async follower(interactive: boolean): Promise<RemoteFollower> {
    const { paths, store, logger, prompts } = this.s;
    const config = await this.s.config.load();
    const { forge, token } = await connectForge(paths.workspace, config, editorToken(interactive, prompts));
    const remoteUrl = (await runGit(paths.workspace, ['remote', 'get-url', config.forge.remote])).stdout.trim();
    return new RemoteFollower({
      workspace: paths.workspace,
      paths,
      config,
      store,
      forge,
      auth: tokenAuth(remoteUrl, token),
      say: (line) => logger.info(line),
    });
  }
}
