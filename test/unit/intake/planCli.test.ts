import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { parseCli } from '../../../src/cli/args';
import { RalphPaths } from '../../../src/core/paths';
import { TaskStore } from '../../../src/core/tasks/store';
import { type ScriptedServer, startScriptedServer } from '../../fixtures/scriptedServer';
import { runCli, runCliInProcess, runOnTerminal } from '../helpers/cliHarness';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';
import { planReply, PRD, proposed, SHOP_PLAN } from '../../fixtures/intake/planDocs';

describe('ralph plan (CLI)', function () {
  this.timeout(60000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  let store: TaskStore;

  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'docs/prd.md': PRD } });
    server = await startScriptedServer();
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    await fs.writeFile(
      ws.path('.ralph/config.json'),
      JSON.stringify({ llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 0 } }),
    );
    store = new TaskStore(new RalphPaths(ws.dir));
  });
  afterEach(async () => {
    await server.close();
    await ws.cleanup();
  });

  it('parses plan, --section, --yes, --json and --accept, and rejects what does not fit', () => {
    assert.deepEqual(parseCli(['plan', 'docs/prd.md', '--section', 'Cart', '-y'], '/w'), {
      kind: 'plan',
      workspace: '/w',
      document: 'docs/prd.md',
      section: 'Cart',
      accept: undefined,
      yes: true,
      json: false,
    });
    assert.equal((parseCli(['plan', '--accept', 'p.json', '--workspace', '/x'], '/w') as { accept: string }).accept, 'p.json');
    assert.throws(() => parseCli(['plan'], '/w'), /plan needs a document/);
    assert.throws(() => parseCli(['plan', 'a.md', 'b.md'], '/w'), /unexpected argument "b\.md"/);
    assert.throws(() => parseCli(['plan', 'a.md', '--accept', 'p.json'], '/w'), /takes no document/);
    assert.throws(() => parseCli(['plan', 'a.md', '--task', 'x'], '/w'), /Unknown option '--task'/);
  });

  it('prints the plan and saves nothing without --yes; --accept adds the kept proposal, edits included', async () => {
    server.push(planReply(SHOP_PLAN));
    const planned = await runCli(['plan', 'docs/prd.md'], ws.dir);
    assert.equal(planned.code, 0, planned.stderr);
    assert.match(planned.stdout, /Plan of docs\/prd\.md: 3 tasks proposed by model-a/);
    assert.match(
      planned.stdout,
      / 1\. Sign-in form {2}\[login-form\]\n {4}feature · complexity 4 · from docs\/prd\.md#sign-in\n {4}request: Add the sign-in form at \/login\.\n {4}promise: A wrong password shows "Invalid email or password"\.\n {4}check: {3}npm test -- --grep login/,
    );
    assert.match(planned.stdout, /after: {3}login-form \("Sign-in form"\)/);
    assert.match(planned.stdout, /note: {4}part 2 of 2 of "Sign-in": split because/);
    assert.match(planned.stderr, /▶ planning docs\/prd\.md with model-a/);
    const kept = /Nothing was saved\. The proposal is in (\.ralph\/reports\/plans\/[\w-]+\.json)/.exec(planned.stdout)?.[1];
    assert.ok(kept, planned.stdout);
    assert.deepEqual(await store.list(), []);

    // the person edits the kept proposal, then accepts it
    const draft = JSON.parse(await ws.read(kept));
    draft.tasks[2].title = 'Cart that survives a reload';
    await ws.write(kept, JSON.stringify(draft));
    const accepted = await runCli(['plan', '--accept', kept], ws.dir);
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.match(
      accepted.stdout,
      /added 3 tasks:\n {2}T-001 {2}Sign-in form\n {2}T-002 {2}Account lockout {2}\(after T-001\)\n {2}T-003 {2}Cart that survives a reload/,
    );
    assert.deepEqual(
      (await store.list()).map((t) => [t.id, t.source, t.check]),
      [
        ['T-001', 'docs/prd.md#sign-in', 'npm test -- --grep login'],
        ['T-002', 'docs/prd.md#sign-in', undefined],
        ['T-003', 'docs/prd.md#cart', undefined],
      ],
    );
    assert.equal(ws.exists(kept), false, 'an accepted proposal is not kept to be accepted twice');
    assert.match(
      await ws.read(kept.replace(/\.json$/, '.md')),
      /## Accepted .*\n- T-001: Sign-in form\n- T-002: Account lockout \(after T-001\)/,
    );
  });

  it('--yes adds the tasks at once; --json prints the proposal and what was added', async () => {
    server.push(planReply([proposed('a'), proposed('b', { dependsOn: ['a'] })]));
    const result = await runCli(['plan', 'docs/prd.md', '--yes', '--json'], ws.dir);
    assert.equal(result.code, 0, result.stderr);
    const json = JSON.parse(result.stdout);
    assert.deepEqual(json.accepted, ['T-001', 'T-002']);
    assert.equal(json.draft.tasks.length, 2);
    assert.equal(json.spend.total.calls, 1);
    assert.deepEqual(
      (await store.list()).map((t) => t.dependsOn),
      [[], ['T-001']],
    );
  });

  it('on a terminal asks y/N before adding: n keeps the store as it was, y adds', async () => {
    server.push(planReply([proposed('a')]), planReply([proposed('a')]));
    const declined = await runOnTerminal(['plan', 'docs/prd.md'], ws.dir, 'n');
    assert.equal(declined.code, 0, declined.stdout);
    assert.match(declined.stdout, /Add this task to \.ralph\/tasks\.json\? \[y\/N\]/);
    assert.deepEqual(await store.list(), []);
    const agreed = await runOnTerminal(['plan', 'docs/prd.md'], ws.dir, 'y');
    assert.equal(agreed.code, 0, agreed.stdout);
    assert.match(agreed.stdout, /added 1 task:\r?\n {2}T-001/);
    assert.equal((await store.list()).length, 1);
  });

  it('refuses a plan with a dependency cycle, naming the tasks (exit 1, nothing saved, even with --yes)', async () => {
    server.push(
      planReply([proposed('a', { title: 'Add login', dependsOn: ['b'] }), proposed('b', { title: 'Session store', dependsOn: ['a'] })]),
    );
    const result = await runCli(['plan', 'docs/prd.md', '--yes'], ws.dir);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /Cannot be accepted as it is:\n {2}✗ dependency cycle "Add login" → "Session store" → "Add login"/);
    assert.match(result.stderr, /Nothing was saved; fix \.ralph\/reports\/plans\/[\w-]+\.json and run: ralph plan --accept/);
    assert.deepEqual(await store.list(), []);
  });

  it('says what is wrong with bad input: a missing document (exit 2), a model that never plans (exit 1), a broken proposal file (exit 2)', async () => {
    let result = await runCli(['plan', 'docs/nope.md'], ws.dir);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /ralph: docs\/nope\.md does not exist/);
    server.push({ content: 'no' }, { content: 'no' }, { content: 'no' });
    result = await runCli(['plan', 'docs/prd.md', '--yes'], ws.dir);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /planning docs\/prd\.md failed: no usable plan after 3 replies.*\(report: \.ralph\/reports\/plans\//);
    await ws.write('broken.json', '{"version": 1, "tasks": 3}');
    result = await runCli(['plan', '--accept', 'broken.json'], ws.dir);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /broken\.json is not a plan proposal:/);
    assert.deepEqual(await store.list(), []);
  });
});
