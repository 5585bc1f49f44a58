import assert from 'node:assert/strict';
import type { Step } from '../../fixtures/scriptedServer';
import { FORGE_TOKEN, type ForgeProject, makeForgeProject, runJob, startJob } from '../helpers/forgeProject';
import { requestText } from '../helpers/loopHarness';
import { waitFor } from '../../helpers/waitFor';

const polite: Step = {
  toolCalls: [
    {
      name: 'write_file',
      arguments: {
        path: 'greet.js',
        content: "exports.greet = (name = 'world') => `Hello, ${name}`;\nexports.polite = (name) => `Good day, ${name}`;\n",
      },
    },
  ],
};
const complete: Step = {
  toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'added polite()', promiseEvidence: 'node --test passes' } }],
};
const progress = (note: string): Step => ({
  toolCalls: [{ name: 'report_progress', arguments: { percent: 50, note } }],
  finishReason: 'tool_calls',
});

describe('a task as a GitHub Actions job (ralph run --task in GITHUB_ACTIONS)', function () {
  this.timeout(120000);
  let project: ForgeProject;

  beforeEach(async () => {
    project = await makeForgeProject();
  });
  afterEach(async () => project.cleanup());

  it('works on ralph/<id> of a fresh clone, pushes it and its state, opens the pull request with report, gates and proof, and enables auto-merge', async () => {
    const [id] = await project.addTasks([{}]);
    project.publish('add a task');
    const mainBefore = project.originGit('rev-parse', 'main');
    project.model.push(polite, complete);
    const job = await runJob(project, id);
    assert.equal(job.code, 0, job.stderr);

    // the work is on the task's branch; nothing reached the target (the forge's merge queue lands it)
    assert.equal(project.originGit('rev-parse', 'main'), mainBefore);
    assert.match(project.originShow(`ralph/${id}`, 'greet.js') ?? '', /Good day/);
    assert.equal(
      project.originShow(`ralph/${id}`, '.ralph/tasks.json'),
      project.originShow('main', '.ralph/tasks.json'),
      "the job's task store is never committed",
    );
    // the state travels on its own branch, outside the pull request
    const record = JSON.parse(project.originShow(`ralph-state/${id}`, 'task.json') ?? '{}');
    assert.equal(record.status, 'in_progress', 'done only once merged');
    const checkpoint = JSON.parse(project.originShow(`ralph-state/${id}`, `state/${id}.json`) ?? '{}');
    assert.equal(checkpoint.history.at(-1).outcome, 'complete');
    assert.ok(checkpoint.receipt, 'the cost receipt rides with the checkpoint');
    assert.match(project.originShow(`ralph-state/${id}`, `reports/${id}/final.md`) ?? '', /Cost receipt/);

    const pr = project.github.pullOf(`ralph/${id}`);
    assert.ok(pr, 'a pull request was opened');
    assert.equal(pr.base.ref, 'main');
    assert.equal(pr.draft, false);
    assert.equal(pr.autoMerge, true, `auto-merge hands it to the merge queue: ${job.stderr}`);
    assert.match(pr.title, new RegExp(`^ralph\\(${id}\\): `));
    for (const part of [
      `<!-- ralph-task: ${id} -->`,
      '### Gate verdicts',
      '| tests | tests | yes | ✅ pass',
      '### Proof',
      'at the base: 2 tests ran, 0 failing',
      'Cost receipt',
      'Job: https://github.example/acme/widgets/actions/runs/4242',
    ]) {
      assert.ok(pr.body.includes(part), `the body has ${part}`);
    }
    // the job's outputs and summary
    assert.equal(job.outputs.status, 'done');
    assert.equal(job.outputs['pr-number'], String(pr.number));
    assert.equal(job.outputs.branch, `ralph/${id}`);
    assert.match(job.summary, /## Ralph T-001/);
    assert.match(job.summary, /auto-merge|Pull request/);
    // the token went to GitHub and nowhere else
    assert.ok(project.github.requests.every((r) => r.authorization === `token ${FORGE_TOKEN}`));
    const everything = [
      job.stdout,
      job.stderr,
      job.summary,
      JSON.stringify(job.outputs),
      ...['task.json', `state/${id}.json`, `reports/${id}/final.md`].map((f) => project.originShow(`ralph-state/${id}`, f) ?? ''),
      ...project.model.requests.map((r) => JSON.stringify(r.body)),
    ];
    assert.ok(
      everything.every((text) => !text.includes(FORGE_TOKEN)),
      'the forge token never reaches a log, a file or the model',
    );
  });

  it("resumes a killed job's task in the next job, from the state and branch it pushed", async () => {
    const [id] = await project.addTasks([{}]);
    project.publish('add a task');
    // iteration 1 changes a file and ends without COMPLETE; iteration 2's model call never answers
    project.model.push(polite, { content: 'halfway <ralph>PROGRESS:50</ralph>' }, { fault: 'hang' });
    const first = await startJob(project, id, { runId: 1 });
    // pushed after iteration 1 ended (by then the checkpoint may already say iteration 2 runs)
    await waitFor('the state after iteration 1 on ralph-state', () => {
      const cp = project.originShow(`ralph-state/${id}`, `state/${id}.json`);
      return cp !== undefined && JSON.parse(cp).history.length >= 1;
    });
    await waitFor('iteration 2 to call the model', () => project.model.requests.length >= 3);
    first.child.kill('SIGKILL');
    const killed = await first.done;
    assert.equal(killed.code, null, 'the job was killed');
    assert.match(project.originShow(`ralph/${id}`, 'greet.js') ?? '', /Good day/, 'iteration 1 was pushed before the kill');

    project.model.push(complete);
    const second = await runJob(project, id, { runId: 2 });
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /resuming T-001/);
    const checkpoint = JSON.parse(project.originShow(`ralph-state/${id}`, `state/${id}.json`) ?? '{}');
    assert.equal(checkpoint.history[0].iteration, 1, 'iteration 1 is in the resumed history');
    assert.ok(checkpoint.iteration >= 2);
    const last = project.model.requests.at(-1)!;
    assert.match(requestText(last), /Iteration 2 of at most/, 'the next job went on with iteration 2');
    assert.equal(project.github.pulls.length, 1);
    assert.equal(project.github.pulls[0].autoMerge, true);
  });

  it('leaves a draft pull request with the report when the task does not finish, and exits as ralph run does', async () => {
    const [id] = await project.addTasks([{ maxIterations: 1 }]);
    project.publish('add a task');
    project.model.push(polite, progress('not yet'), { content: 'still working <ralph>PROGRESS:40</ralph>' });
    const job = await runJob(project, id, { ci: true });
    assert.equal(job.code, 1, job.stderr);
    assert.equal(job.outputs.status, 'timeout');
    const pr = project.github.pullOf(`ralph/${id}`)!;
    assert.equal(pr.draft, true, "a failed task's pull request is a draft");
    assert.equal(pr.autoMerge, false);
    assert.match(pr.body, /⚠️ timeout/);
    assert.equal(JSON.parse(project.originShow(`ralph-state/${id}`, 'task.json') ?? '{}').status, 'timeout');
    // a Retry dispatches again: the job resumes on the branch with a fresh counter, and the draft turns ready
    project.model.push(complete);
    const retry = await runJob(project, id, { ci: true });
    assert.equal(retry.code, 0, retry.stderr);
    assert.match(retry.stderr, /resuming T-001 \(it was timeout\)/);
    assert.equal(project.github.pulls.length, 1, 'the same pull request is brought up to date');
    assert.equal(project.github.pullOf(`ralph/${id}`)!.draft, false);
    assert.equal(project.github.pullOf(`ralph/${id}`)!.autoMerge, true);
  });

  it("goes back to its agent with the merge queue's failure and the target merged in", async () => {
    const [id] = await project.addTasks([{}]);
    project.publish('add a task');
    project.model.push(polite, complete);
    assert.equal((await runJob(project, id)).code, 0);
    // the target moves on meanwhile
    await project.ws.write('NOTES.md', 'moved on\n');
    project.publish('target moves');
    project.model.push({ content: 'checked the merged result <ralph>COMPLETE</ralph>' });
    const job = await runJob(project, id, {
      feedback: { [id]: 'the required check ralph gate failed on the merged result: 1 test failing' },
    });
    assert.equal(job.code, 0, job.stderr);
    const prompt = requestText(project.model.requests.at(-1)!);
    assert.match(prompt, /Merge queue: your pull request was removed from the forge's merge queue: the required check ralph gate failed/);
    assert.equal(project.originShow(`ralph/${id}`, 'NOTES.md'), 'moved on', "the target's tip is merged into the task branch");
    assert.equal(project.originShow(`ralph/${id}`, '.ralph/tasks.json'), project.originShow('main', '.ralph/tasks.json'));
  });

  it('refuses without a token, before changing anything', async () => {
    const [id] = await project.addTasks([{}]);
    project.publish('add a task');
    const job = await runJob(project, id, { tokenless: true });
    assert.equal(job.code, 2, job.stderr);
    assert.match(job.stderr, /no GitHub token: set GITHUB_TOKEN/);
    assert.equal(project.originShow(`ralph/${id}`, 'greet.js'), undefined, 'nothing was pushed');
    assert.equal(project.model.requests.length, 0, 'no model call was made');
  });
});
