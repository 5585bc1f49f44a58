import * as vscode from 'vscode';
import { loadConfig } from '../core/config/service';
import { errorMessage } from '../core/errors';
import { connectForge } from '../core/forge/connect';
import { RemoteFollower } from '../core/forge/follower';
import { remoteActive } from '../core/forge/remoteTask';
import { tokenAuth } from '../core/forge/taskState';
import { environmentToken, type ForgeToken, ForgeTokenError, type ForgeTokenSource } from '../core/forge/token';
import { DEFAULT_WORKFLOW_OPTIONS, GATE_CHECK_NAME, writeWorkflows } from '../core/forge/workflows';
import { runGit } from '../core/git/gitExec';
import type { RalphPaths } from '../core/paths';
import type { Task } from '../core/tasks/schema';
import type { TaskStore } from '../core/tasks/store';
import type { Logger } from '../core/ports';
import type { Prompts } from '../ui/prompts';
import { taskIdOf } from './taskCommands';

export interface ForgeCommandServices {
  paths: RalphPaths;
  store: TaskStore;
  logger: Logger;
  prompts: Prompts;
}

/** GitHub's scopes for dispatching workflows and opening pull requests. */
const SCOPES = ['repo', 'workflow'];
/** A silent look for VS Code's GitHub session never holds a command up longer than this. */
const SILENT_SESSION_MS = 10_000;

/** What the person can do instead of signing in to GitHub in VS Code. */
const OTHER_WAYS = 'set GITHUB_TOKEN in the environment VS Code starts from (a token with the contents, pull requests and actions permissions of the repository), or log in with the GitHub CLI (gh auth login)';
/** What the person can do when there is no token: said in the error. */
export const TOKEN_HINT = `sign in to GitHub in VS Code (Ralph asks when you run Run Tasks on GitHub Actions), ${OTHER_WAYS}`;

/**
 * The editor's token: VS Code's GitHub session (asked silently first, bounded), else what the CLI
 * would use (GITHUB_TOKEN, GH_TOKEN, gh). Without either, on the person's command Ralph asks
 * whether to sign in to GitHub (VS Code's sign-in); else, or when the sign-in does not complete,
 * a ForgeTokenError says what to do. Kept in memory.
 */
export function editorToken(interactive: boolean, prompts: Prompts, env: NodeJS.ProcessEnv = process.env): ForgeTokenSource {
  return async (): Promise<ForgeToken> => {
    const silent = await silentSession();
    if (silent) return sessionToken(silent);
    try {
      return await environmentToken(env)();
    } catch (error) {
      if (!(error instanceof ForgeTokenError)) throw error;
    }
    const signIn = 'Sign In to GitHub';
    if (!interactive || !(await prompts.confirm('Ralph needs a GitHub token to run tasks on GitHub Actions.', `There is no GitHub session in VS Code and no GITHUB_TOKEN, GH_TOKEN or gh login. Sign in to GitHub now, or ${OTHER_WAYS}, then run the command again.`, signIn))) {
      throw new ForgeTokenError(`no GitHub token: ${TOKEN_HINT}`);
    }
    try {
      return sessionToken(await vscode.authentication.getSession('github', SCOPES, { createIfNone: true }));
    } catch (error) {
      throw new ForgeTokenError(`the GitHub sign-in did not complete (${errorMessage(error)}): ${TOKEN_HINT}`);
    }
  };
}

async function silentSession(): Promise<vscode.AuthenticationSession | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), SILENT_SESSION_MS)));
  // no GitHub provider (a web editor offline, say) rejects: the same as no session
  const session = Promise.resolve(vscode.authentication.getSession('github', SCOPES, { silent: true })).catch(() => undefined);
  try {
    return await Promise.race([session, bound]);
  } finally {
    clearTimeout(timer);
  }
}

function sessionToken(session: vscode.AuthenticationSession): ForgeToken {
  return { value: session.accessToken, source: `VS Code's GitHub session (${session.account.label})` };
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
      const one = kept.length === 1;
      const replace = await this.s.prompts.confirm(`${names} exist${one ? 's' : ''} and differ${one ? 's' : ''} from what Ralph would write.`, `Replace ${one ? 'it' : 'them'} with Ralph's workflows? Your changes to ${one ? 'it' : 'them'} would be lost; Cancel keeps ${one ? 'it' : 'them'} as ${one ? 'it is' : 'they are'}.`, 'Replace');
      if (replace) written = await writeWorkflows(this.s.paths.workspace, config, options, true);
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
      const answer = await vscode.window.showWarningMessage(`Ralph: ${held.map((t) => t.id).join(', ')} ${many ? 'run' : 'runs'} on GitHub Actions, but there is no GitHub token to follow ${many ? 'them' : 'it'}: ${TOKEN_HINT}.`, signIn);
      if (answer === signIn) await this.follower(true).then((f) => this.follow(f), (e: unknown) => void vscode.window.showErrorMessage(`Ralph: ${errorMessage(e)}`));
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
      const pollMs = (await loadConfig(this.s.paths)).forge.pollSeconds * 1000;
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
    const config = await loadConfig(paths);
    const { forge, token } = await connectForge(paths.workspace, config, editorToken(interactive, prompts));
    const remoteUrl = (await runGit(paths.workspace, ['remote', 'get-url', config.forge.remote])).stdout.trim();
    return new RemoteFollower({ workspace: paths.workspace, paths, config, store, forge, auth: tokenAuth(remoteUrl, token), say: (line) => logger.info(line) });
  }
}
