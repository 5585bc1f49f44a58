/**
 * The forge as the integration tests play it: a bare repository beside the workspace as its
 * `origin`, the scripted GitHub API on 127.0.0.1, and the jobs' traces a real job leaves there —
 * its branch pushed to the origin, its pull request opened through the REST API with auto-merge
 * on — and the merge the forge's queue makes (the pull request squashed onto the target).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { startGitHubServer, type FakePull, type FakeRun, type GitHubServer } from '../fixtures/githubServer';

export const FORGE_TOKEN = 'ghs_editorForgeTokenForTests1234567';

const IDENTITY = { GIT_AUTHOR_NAME: 'Ralph Test', GIT_AUTHOR_EMAIL: 'ralph-test@example.invalid', GIT_COMMITTER_NAME: 'Ralph Test', GIT_COMMITTER_EMAIL: 'ralph-test@example.invalid' };

export interface ForgeScene {
  github: GitHubServer;
  origin: string;
  /** Every dispatch with the origin's target as it stood then. */
  dispatches: { run: FakeRun; targetFiles: string[] }[];
  git(cwd: string, ...args: string[]): string;
  /** What a job that finished its task leaves: `ralph/<id>` pushed with `file`, and its pull request open with auto-merge on. */
  finishJob(taskId: string, file: string): Promise<FakePull>;
  /** Removes the origin and the clones, closes the server. */
  close(): Promise<void>;
}

export async function startForgeScene(workspace: string): Promise<ForgeScene> {
  const scratch = mkdtempSync(path.join(path.dirname(workspace), 'forge-'));
  const origin = path.join(scratch, 'origin.git');
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...IDENTITY, GIT_TERMINAL_PROMPT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  const dispatches: ForgeScene['dispatches'] = [];
  let clones = 0;
  const clone = (ref: string): string => {
    const dir = path.join(scratch, `clone-${++clones}`);
    git(scratch, 'clone', '-q', '--branch', ref, origin, dir);
    return dir;
  };
  const github = await startGitHubServer({
    token: FORGE_TOKEN,
    workflows: ['ralph.yml'],
    onDispatch: (run) => dispatches.push({ run, targetFiles: git(origin, 'ls-tree', '-r', '--name-only', run.head_branch).split('\n') }),
    onMerge: (pr) => {
      const dir = clone(pr.base.ref);
      git(dir, 'fetch', '-q', 'origin', pr.head.ref);
      git(dir, 'merge', '-q', '--squash', 'FETCH_HEAD');
      git(dir, 'commit', '-q', '-m', `${pr.title} (#${pr.number})`);
      git(dir, 'push', '-q', 'origin', pr.base.ref);
      return git(dir, 'rev-parse', 'HEAD');
    },
  });
  git(scratch, 'init', '-q', '--bare', '-b', 'main', origin);
  /** A call the job makes with its token; a refusal fails the test. */
  const api = async (route: string, body: unknown): Promise<unknown> => {
    const response = await fetch(`${github.url}${route}`, { method: 'POST', headers: { authorization: `token ${FORGE_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await response.text();
    if (!response.ok || /"errors"/.test(text)) throw new Error(`the scripted forge refused ${route}: ${response.status} ${text}`);
    return JSON.parse(text);
  };
  return {
    github,
    origin,
    dispatches,
    git,
    async finishJob(taskId, file) {
      const dir = clone('main');
      git(dir, 'checkout', '-q', '-b', `ralph/${taskId}`);
      writeFileSync(path.join(dir, file), `${taskId}\n`);
      git(dir, 'add', file);
      git(dir, 'commit', '-q', '-m', `${taskId}: ${file}`);
      git(dir, 'push', '-q', 'origin', `ralph/${taskId}`);
      const pull = (await api('/repos/acme/widgets/pulls', { title: `${taskId}: ${file}`, head: `ralph/${taskId}`, base: 'main', body: 'the final report', draft: false })) as { node_id: string };
      await api('/graphql', { query: 'mutation RalphEnableAutoMerge($id: ID!) { enablePullRequestAutoMerge(input: { pullRequestId: $id }) { pullRequest { autoMergeRequest { enabledAt } } } }', variables: { id: pull.node_id } });
      return github.pullOf(`ralph/${taskId}`)!;
    },
    async close() {
      await github.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
