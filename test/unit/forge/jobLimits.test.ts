/**
 * The job's time limit travels with each dispatch: the task's time limit plus set-up, from the
 * configuration on the target the job clones — so raising loop.taskTimeoutMinutes does not need
 * a new workflow — and only to a workflow that declares the input (GitHub refuses others).
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { parseConfig } from '../../../src/core/config/load';
import { RemoteFollower } from '../../../src/core/forge/follower';
import { GitHubForge } from '../../../src/core/forge/github';
import { DEFAULT_WORKFLOW_OPTIONS, dispatchWorkflow, projectFacts } from '../../../src/core/forge/workflows';
import { RalphPaths } from '../../../src/core/paths';
import { TaskStore } from '../../../src/core/tasks/store';
import { FORGE_TOKEN, type ForgeProject, makeForgeProject } from '../helpers/forgeProject';

/** An older dispatch workflow: the inputs Ralph sent before the time limit was one. */
const OLDER_WORKFLOW = `name: Ralph tasks
on:
  workflow_dispatch:
    inputs:
      tasks: { required: true, type: string }
      target: { required: true, type: string }
      dispatch: { required: false, type: string, default: "" }
      feedback: { required: false, type: string, default: "{}" }
jobs:
  task:
    runs-on: ubuntu-latest
    timeout-minutes: 50
    steps: [{ run: "true" }]
`;

describe("the job's time limit sent with each dispatch", function () {
  this.timeout(60000);
  let project: ForgeProject;

  afterEach(async () => project?.cleanup());

  async function setUp(workflow: (config: ReturnType<typeof parseConfig>) => Promise<string>, pushedMinutes: number, localMinutes: number) {
    // filled in once the workflow is written: the scripted forge reads it at each dispatch
    const workflowInputs: Record<string, string[]> = {};
    project = await makeForgeProject({ workflowInputs });
    const configFile = path.join(project.ws.dir, '.ralph', 'config.json');
    const settings = JSON.parse(await fs.readFile(configFile, 'utf8'));
    await fs.writeFile(configFile, JSON.stringify({ ...settings, loop: { maxIterations: 4, taskTimeoutMinutes: pushedMinutes } }, null, 2));
    const text = await workflow(parseConfig({ loop: { taskTimeoutMinutes: pushedMinutes } }));
    workflowInputs['ralph.yml'] = Object.keys(parse(text).on.workflow_dispatch.inputs);
    await project.ws.write('.github/workflows/ralph.yml', text);
    await project.addTasks([{}]);
    project.publish('a task, its workflow and a longer time limit');
    // the person's own copy says otherwise, uncommitted: the job clones the pushed one
    await fs.writeFile(configFile, JSON.stringify({ ...settings, loop: { maxIterations: 4, taskTimeoutMinutes: localMinutes } }, null, 2));
    const config = parseConfig({ ...settings, loop: { maxIterations: 4, taskTimeoutMinutes: localMinutes } });
    const paths = new RalphPaths(project.ws.dir);
    return new RemoteFollower({
      workspace: project.ws.dir,
      paths,
      config,
      store: new TaskStore(paths),
      forge: new GitHubForge({ repo: { owner: 'acme', name: 'widgets' }, token: FORGE_TOKEN, apiUrl: project.github.url }),
      auth: { env: {} },
      say: () => undefined,
    });
  }

  it("sends the limit from the target's pushed configuration, which the job will run with, not the workspace's", async () => {
    const follower = await setUp(
      async (config) =>
        dispatchWorkflow(config, await projectFacts(project.ws.dir), { ...DEFAULT_WORKFLOW_OPTIONS, workflow: 'ralph.yml' }),
      100,
      10,
    );
    assert.deepEqual(await follower.dispatch(), ['T-001']);
    const [run] = project.github.runs;
    assert.equal(run.inputs.minutes, '120', 'loop.taskTimeoutMinutes 100 on main, plus 20 for set-up');
    assert.deepEqual(Object.keys(run.inputs).sort(), ['dispatch', 'feedback', 'minutes', 'target', 'tasks']);
  });

  it('sends no limit to an older workflow that does not declare it (GitHub would refuse the dispatch)', async () => {
    const follower = await setUp(async () => OLDER_WORKFLOW, 100, 10);
    assert.deepEqual(await follower.dispatch(), ['T-001']);
    assert.equal(project.github.runs[0].inputs.minutes, undefined);
  });

  it('the scripted forge refuses an input the workflow does not declare, as GitHub does', async () => {
    const follower = await setUp(
      async () => OLDER_WORKFLOW.replace('      feedback: { required: false, type: string, default: "{}" }\n', ''),
      100,
      10,
    );
    await assert.rejects(follower.dispatch(), /Unexpected inputs provided: \["feedback"\]/);
    assert.equal(project.github.runs.length, 0);
  });
});
