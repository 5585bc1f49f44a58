import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseConfig } from '../../../src/core/config/load';
import { GitHubForge } from '../../../src/core/forge/github';
import { RemoteFollower } from '../../../src/core/forge/follower';
import { RalphPaths } from '../../../src/core/paths';
import { TaskStore } from '../../../src/core/tasks/store';
import type { FakePull, FakeRun } from '../../fixtures/githubServer';
import type { Step } from '../../fixtures/scriptedServer';
import { runCliInProcess, startCli } from '../helpers/cliHarness';
import { FORGE_TOKEN, type ForgeProject, makeForgeProject, runJob, withoutActions } from '../helpers/forgeProject';
import { requestText, TEST_KEY, TEST_KEY_ENV } from '../helpers/loopHarness';
import { TEST_GIT_ENV } from '../helpers/tempWorkspace';
import { waitFor } from '../../helpers/waitFor';

const writeFile = (file: string, content: string): Step => ({ toolCalls: [{ name: 'write_file', arguments: { path: file, content } }] });
const complete: Step = { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'tests pass' } }] };

/** The merge the forge's queue makes: the pull request's head squashed onto the target of the bare origin. */
function squashOnOrigin(project: ForgeProject, pr: FakePull): string {
  const dir = path.join(path.dirname(project.origin), `merge-${pr.number}`);
  execFileSync('git', ['clone', '-q', '--branch', pr.base.ref, project.origin, dir], { env: TEST_GIT_ENV });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env: TEST_GIT_ENV, encoding: 'utf8' }).trim();
  git('fetch', '-q', 'origin', pr.head.ref);
  git('merge', '-q', '--squash', 'FETCH_HEAD');
  git('commit', '-q', '-m', `${pr.title} (#${pr.number})`);
  git('push', '-q', 'origin', pr.base.ref);
  return git('rev-parse', 'HEAD');
}

describe('ralph remote: tasks dispatched to GitHub Actions and followed to the merge', function () {
  this.timeout(180000);
  let project: ForgeProject;
  const jobs: Promise<unknown>[] = [];

  afterEach(async () => {
    await Promise.allSettled(jobs.splice(0));
    await project.cleanup();
  });

  it('dispatches the ready task, follows its job, PR and queue entry, and dispatches the dependent only once its dependency merged', async () => {
    const dispatches: { run: FakeRun; mainAtDispatch: string; greetAtDispatch: string | undefined }[] = [];
    project = await makeForgeProject({
      autoQueue: true,
      onMerge: (pr) => squashOnOrigin(project, pr),
      onDispatch: (run) => {
        dispatches.push({
          run,
          mainAtDispatch: project.originGit('rev-parse', 'main'),
          greetAtDispatch: project.originShow('main', 'greet.js'),
        });
        // the runner picks the jobs up: each one a simulated job against the scripted APIs
        for (const job of run.jobs) {
          const taskId = job.name.replace(/^ralph /, '');
          project.github.setJob(taskId, 'in_progress');
          jobs.push(
            runJob(project, taskId, { runId: run.id }).then((result) =>
              project.github.setJob(taskId, 'completed', result.code === 0 ? 'success' : 'failure'),
            ),
          );
        }
      },
    });
    // the jobs run one after the other (the dependent only after the merge): the model serves them in turn
    project.model.push(
      writeFile('polite.js', 'exports.polite = (n) => `Good day, ${n}`;\n'),
      complete,
      writeFile('farewell.js', "exports.bye = () => require('./polite.js').polite('and goodbye');\n"),
      complete,
    );
    const [first, second] = await project.addTasks([
      { title: 'Polite greeting' },
      { title: 'Farewell', prompt: 'Add farewell.js using polite.js', promise: 'farewell.js uses polite', dependsOn: ['T-001'] },
    ]);
    project.publish('two tasks');
    const cli = startCli(['remote', 'run'], project.ws.dir, {
      ...withoutActions(TEST_GIT_ENV),
      [TEST_KEY_ENV]: TEST_KEY,
      GITHUB_TOKEN: FORGE_TOKEN,
    });
    // the queue takes the first pull request; the test plays the merge queue landing it
    await waitFor('T-001 in the merge queue', () => project.github.pullOf(`ralph/${first}`)?.inQueue === true, 60_000);
    assert.equal(dispatches.length, 1, 'the dependent waits');
    assert.deepEqual(JSON.parse(dispatches[0].run.inputs.tasks), [first]);
    await project.github.merge(`ralph/${first}`);
    await waitFor('T-002 in the merge queue', () => project.github.pullOf(`ralph/${second}`)?.inQueue === true, 60_000);
    assert.equal(dispatches.length, 2);
    assert.deepEqual(JSON.parse(dispatches[1].run.inputs.tasks), [second]);
    assert.ok(project.originShow(dispatches[1].mainAtDispatch, 'polite.js'), 'the dependent started from a tip that has its dependency');
    await project.github.merge(`ralph/${second}`);
    const result = await cli.done;
    assert.equal(result.code, 0, result.stderr + result.stdout);
    assert.match(result.stdout, /T-001: merged/);
    assert.match(result.stdout, /dispatched T-002/);
    const tasks = await new TaskStore(new RalphPaths(project.ws.dir)).list();
    assert.deepEqual(
      tasks.map((t) => [t.id, t.status, t.remote?.state]),
      [
        [first, 'done', 'merged'],
        [second, 'done', 'merged'],
      ],
    );
    assert.equal(tasks[0].remote?.url, project.github.pullOf(`ralph/${first}`)!.html_url, 'a merged task links to its pull request');
    // the job's reports came home: Show Report and the panel see them
    assert.match(await fs.readFile(path.join(project.ws.dir, '.ralph', 'reports', first, 'final.md'), 'utf8'), /Cost receipt/);
    const status = await runCliJson(project, ['remote', 'status', '--json']);
    assert.deepEqual(
      status.map((t: { id: string; remote: { state: string } }) => [t.id, t.remote.state]),
      [
        [first, 'merged'],
        [second, 'merged'],
      ],
    );
  });

  it("sends a pull request the merge queue removed back to its agent with the queue's failure, then needs_help after merge.maxReturns", async () => {
    project = await makeForgeProject({}, { merge: { maxReturns: 1 } });
    const [id] = await project.addTasks([{}]);
    project.publish('a task');
    project.model.push(writeFile('polite.js', 'exports.polite = (n) => `Good day, ${n}`;\n'), complete);
    const config = parseConfig({ merge: { maxReturns: 1 }, forge: { repository: 'acme/widgets', apiUrl: project.github.url } });
    const paths = new RalphPaths(project.ws.dir);
    const store = new TaskStore(paths);
    const said: string[] = [];
    const follower = new RemoteFollower({
      workspace: project.ws.dir,
      paths,
      config,
      store,
      forge: new GitHubForge({ repo: { owner: 'acme', name: 'widgets' }, token: FORGE_TOKEN, apiUrl: project.github.url }),
      auth: { env: {} },
      say: (l) => said.push(l),
    });
    assert.deepEqual(await follower.dispatch(), [id]);
    assert.equal((await store.get(id)).remote?.state, 'queued');
    project.github.setJob(id, 'in_progress');
    await follower.refresh();
    assert.equal((await store.get(id)).remote?.state, 'running');
    const job = await runJob(project, id, { runId: project.github.runs[0].id });
    assert.equal(job.code, 0, job.stderr);
    project.github.setJob(id, 'completed', 'success');
    await follower.refresh();
    assert.equal((await store.get(id)).remote?.state, 'pr-open');
    project.github.enqueue(`ralph/${id}`);
    await follower.refresh();
    assert.deepEqual(
      [(await store.get(id)).remote?.state, (await store.get(id)).remote?.detail],
      ['in-queue', 'position 1, awaiting checks'],
    );

    project.github.removeFromQueue(`ralph/${id}`, 'a required status check failed', {
      name: 'ralph gate',
      summary: 'tests: 1 test failing on the merged result',
    });
    await follower.refresh();
    const back = await store.get(id);
    assert.equal(back.remote?.state, 'queued', 'dispatched again');
    assert.equal(back.remote?.returns, 1);
    const feedback = JSON.parse(project.github.runs.at(-1)!.inputs.feedback);
    assert.match(
      feedback[id],
      /a required status check failed; ralph gate failure: required gates failed: tests: 1 test failing on the merged result/,
    );
    // the next job takes the feedback into the agent's context
    project.model.push(complete);
    const again = await runJob(project, id, { runId: project.github.runs.at(-1)!.id, feedback });
    assert.equal(again.code, 0, again.stderr);
    assert.match(requestText(project.model.requests.at(-1)!), /removed from the forge's merge queue: a required status check failed/);
    project.github.setJob(id, 'completed', 'success');
    project.github.enqueue(`ralph/${id}`);
    await follower.refresh();
    // removed a second time: past merge.maxReturns (1) it needs a person
    project.github.removeFromQueue(`ralph/${id}`, 'merge conflict');
    await follower.refresh();
    const stuck = await store.get(id);
    assert.equal(stuck.status, 'needs_help');
    assert.equal(stuck.remote?.state, 'failed');
    assert.match(stuck.blockedReason ?? '', /not merged after 2 attempts: the merge queue removed #1 \(merge conflict\)/);
    assert.equal(project.github.runs.filter((r) => r.event === 'workflow_dispatch').length, 2, 'no third dispatch');
    assert.ok(said.some((l) => /back to its agent \(return 1 of 1\)/.test(l)));
  });

  it('refuses to dispatch a task the pushed store does not have, and a local run refuses a task the forge holds', async () => {
    project = await makeForgeProject();
    const [id] = await project.addTasks([{}]);
    const env = { ...withoutActions(TEST_GIT_ENV), [TEST_KEY_ENV]: TEST_KEY, GITHUB_TOKEN: FORGE_TOKEN };
    const unpublished = await runCliInProcess(['remote', 'run', '--detach'], project.ws.dir, env);
    assert.equal(unpublished.code, 2, unpublished.stderr);
    assert.match(unpublished.stderr, /T-001 is not in \.ralph\/tasks\.json on origin\/main: commit and push the task store first/);
    assert.equal(project.github.runs.length, 0);
    project.publish('the task');
    const detached = await runCliInProcess(['remote', 'run', '--detach'], project.ws.dir, env);
    assert.equal(detached.code, 0, detached.stderr);
    const local = await startCli(['run', '--task', id], project.ws.dir, env).done;
    assert.equal(local.code, 2);
    assert.match(local.stderr, /runs on the forge \(queued: https:\/\/github\.example\/acme\/widgets\/actions\/runs\/\d+\)/);
    const autopilot = await startCli(['run'], project.ws.dir, env).done;
    assert.equal(autopilot.code, 0, autopilot.stderr);
    assert.equal(project.model.requests.length, 0, 'the autopilot leaves it to the forge');
  });
});

async function runCliJson(project: ForgeProject, args: string[]) {
  const result = await runCliInProcess(args, project.ws.dir, { ...withoutActions(TEST_GIT_ENV), GITHUB_TOKEN: FORGE_TOKEN });
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}
