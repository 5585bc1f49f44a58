import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseConfig } from '../../../src/core/config/load';
import type { RalphConfigInput } from '../../../src/core/config/schema';
import { EventBus, type RalphEvent } from '../../../src/core/events';
import {
  acceptPlan,
  dropPlannedTask,
  editPlannedTask,
  mergePlannedTasks,
  movePlannedTask,
  PlanRefusedError,
} from '../../../src/core/intake/plan/planDraft';
import { PlanFailedError, planFromDocument } from '../../../src/core/intake/plan/planner';
import { createModelClient } from '../../../src/core/llm/factory';
import { RalphPaths } from '../../../src/core/paths';
import { TaskStore } from '../../../src/core/tasks/store';
import { type ScriptedServer, startScriptedServer } from '../../fixtures/scriptedServer';
import { TEST_KEY } from '../helpers/loopHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';
import { planReply, PRD, proposed, SHOP_PLAN } from '../../fixtures/intake/planDocs';

describe('planning from a document (core, scripted model)', function () {
  this.timeout(30000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  let store: TaskStore;
  let events: RalphEvent[];
  let bus: EventBus;

  beforeEach(async () => {
    ws = await makeTempWorkspace({
      commit: true,
      files: { 'docs/prd.md': PRD, 'src/cart.ts': 'export {};\n', 'package.json': JSON.stringify({ scripts: { test: 'mocha' } }) },
    });
    // a file git does not track yet, and one it ignores: the layout lists the first only
    await ws.write('src/new.ts', 'export {};\n');
    await ws.write('.gitignore', 'secret.env\n');
    await ws.write('secret.env', 'X=1\n');
    server = await startScriptedServer();
    store = new TaskStore(new RalphPaths(ws.dir));
    events = [];
    bus = new EventBus();
    bus.subscribe((e) => events.push(e));
  });
  afterEach(async () => {
    await server.close();
    await ws.cleanup();
  });

  function deps(extra: RalphConfigInput = {}) {
    const config = parseConfig({
      ...extra,
      llm: { baseUrl: server.url, models: ['small', 'large'], maxRetries: 0, prices: { large: { input: 2, output: 8 } }, ...extra.llm },
    });
    return { workspace: ws.dir, config, model: createModelClient(config.llm, TEST_KEY), bus, store };
  }

  it('reads the document and the layout, proposes tasks linked to their sections, and saves nothing', async () => {
    server.push(planReply(SHOP_PLAN, 'Payments are out of scope.'));
    const outcome = await planFromDocument(deps(), { document: 'docs/prd.md' });

    assert.deepEqual(outcome.problems, []);
    assert.deepEqual(
      outcome.draft.tasks.map((t) => [t.key, t.source]),
      [
        ['login-form', 'docs/prd.md#sign-in'],
        ['lockout', 'docs/prd.md#sign-in'],
        ['cart', 'docs/prd.md#cart'],
      ],
    );
    assert.equal(outcome.draft.tasks[0].check, 'npm test -- --grep login');
    assert.match(outcome.draft.tasks[1].notes.join(), /part 2 of 2 of "Sign-in": split because lockout needs its own store/);
    assert.equal(outcome.draft.notes, 'Payments are out of scope.');
    assert.deepEqual(await store.list(), [], 'nothing is in the task store before a person accepts');

    // what the model read: the document (not the shell comment as a section), the layout without ignored files, the scripts
    const sent = String(server.requests[0].body?.messages?.[1].content);
    assert.match(sent, /## Its sections\n- Shop PRD\n {2}- Sign-in\n {2}- Cart\n {2}- Out of scope\n/);
    assert.doesNotMatch(sent, /- not a heading/);
    assert.match(sent, /src\/new\.ts/);
    assert.doesNotMatch(sent, /secret\.env/);
    assert.match(sent, /- test: mocha/);
    assert.equal(server.requests[0].body?.model, 'large', 'planning starts at the top of the ladder, like architecture work');
    assert.equal(server.requests[0].body?.tools?.[0].function.name, 'propose_tasks');

    // a run step of its own: events in its run log, a report with the receipt, the proposal beside it
    assert.deepEqual(
      events.map((e) => e.type),
      ['plan.started', 'plan.finished'],
    );
    const log = (await fs.readFile(outcome.logFile, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RalphEvent);
    assert.deepEqual(
      log.map((e) => e.type),
      ['plan.started', 'plan.finished'],
    );
    const report = await fs.readFile(outcome.reportFile, 'utf8');
    assert.match(report, /Outcome: \*\*PROPOSED\*\* — 3 tasks proposed for review/);
    assert.match(report, /## Cost receipt/);
    assert.match(report, /\| planner \| 1 \| 1200 \| 0 \| 300 \| \$0\.0048/);
    assert.equal(path.dirname(outcome.reportFile), ws.path('.ralph', 'reports', 'plans'));
    assert.deepEqual(JSON.parse(await fs.readFile(outcome.draftFile, 'utf8')), outcome.draft);
    // budget and receipt: counted like a run's
    assert.equal(outcome.spend.total.calls, 1);
    assert.equal(outcome.spend.byTask.plan.promptTokens, 1200);
    assert.ok(Math.abs(outcome.spend.costUsd - 0.0048) < 1e-9);
  });

  it('answers a reply it cannot use with what was wrong, and takes the corrected plan', async () => {
    server.push(
      { toolCalls: [{ name: 'propose_tasks', arguments: '{"tasks": [' }] },
      {
        toolCalls: [
          { name: 'propose_tasks', arguments: { tasks: [proposed('a', { promise: '' }), proposed('a', { dependsOn: ['ghost'] })] } },
        ],
      },
      // a model that cannot call tools: the plan as JSON in its text
      {
        content: `Here is the plan:\n\`\`\`json\n${JSON.stringify({ tasks: [proposed('a'), proposed('b', { dependsOn: ['a'] })] })}\n\`\`\``,
      },
    );
    const outcome = await planFromDocument(deps(), { document: ws.path('docs', 'prd.md') });
    assert.deepEqual(
      outcome.draft.tasks.map((t) => [t.key, t.dependsOn]),
      [
        ['a', []],
        ['b', ['a']],
      ],
    );
    assert.equal(server.requests.length, 3);
    const second = server.requests[1].body?.messages ?? [];
    assert.equal(second.at(-1)?.role, 'tool', 'the malformed call is answered');
    assert.match(String(second.at(-1)?.content), /not valid JSON/);
    const third = server.requests[2].body?.messages ?? [];
    assert.match(String(third.at(-1)?.content), /tasks\.0\.promise: Too small/);
    assert.equal(outcome.spend.total.calls, 3, 'every attempt is on the receipt');
    assert.match(
      await fs.readFile(outcome.reportFile, 'utf8'),
      /## Replies that could not be used\n- attempt 1 \(large\): the arguments of propose_tasks are not valid JSON/,
    );
  });

  it('gives up after three unusable replies with a clear error and a report; nothing saved', async () => {
    server.push(
      { content: 'I think you should build a shop.' },
      { content: 'Sure!' },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'x' } }] },
    );
    await assert.rejects(planFromDocument(deps(), { document: 'docs/prd.md' }), (error: unknown) => {
      assert.ok(error instanceof PlanFailedError);
      assert.match(error.message, /no usable plan after 3 replies; the last: called write_file; the only tool is propose_tasks/);
      return true;
    });
    assert.deepEqual(await store.list(), []);
    assert.equal(events.at(-1)?.type, 'plan.finished');
    assert.equal((events.at(-1) as { outcome: string }).outcome, 'failed');
    const reports = await fs.readdir(ws.path('.ralph', 'reports', 'plans'));
    assert.deepEqual(
      reports.filter((f) => f.endsWith('.json')),
      [],
      'no proposal is kept from a failed plan',
    );
    assert.match(await fs.readFile(ws.path('.ralph', 'reports', 'plans', reports[0]), 'utf8'), /Outcome: \*\*FAILED\*\*/);
  });

  it("a provider fault ends planning with the provider's reason and a report; nothing saved", async () => {
    server.push({
      fault: 'status',
      status: 401,
      body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } },
    });
    await assert.rejects(
      planFromDocument(deps(), { document: 'docs/prd.md' }),
      (error: unknown) =>
        error instanceof PlanFailedError &&
        /planning docs\/prd\.md failed: .*Incorrect API key provided.*\(report: \.ralph\/reports\/plans\//.test(error.message),
    );
    assert.deepEqual(await store.list(), []);
    const [report] = (await fs.readdir(ws.path('.ralph', 'reports', 'plans'))).filter((f) => f.endsWith('.md'));
    assert.match(await fs.readFile(ws.path('.ralph', 'reports', 'plans', report), 'utf8'), /FAILED[\s\S]*\| planner \| 0 \|/);
  });

  it('retries a rate-limited call like a run: a model.retry event, the retry on the receipt; .ralph/ gets its .gitignore', async () => {
    server.push(
      { fault: 'status', status: 429, retryAfter: 0, body: { error: { message: 'Rate limit reached', type: 'requests' } } },
      planReply([proposed('a')]),
    );
    const outcome = await planFromDocument(deps({ llm: { maxRetries: 1 } }), { document: 'docs/prd.md' });
    assert.equal(outcome.draft.tasks.length, 1);
    assert.deepEqual(
      events.map((e) => e.type),
      ['plan.started', 'model.retry', 'plan.finished'],
    );
    assert.equal(outcome.spend.total.retries, 1);
    assert.match(
      await fs.readFile(ws.path('.ralph', '.gitignore'), 'utf8'),
      /^reports\/$/m,
      'the plan report and run log are not committed',
    );
  });

  it('stops at the run budget like a run, and says which cap', async () => {
    server.push({ content: 'no plan here', usage: { prompt_tokens: 900, completion_tokens: 200 } });
    await assert.rejects(
      planFromDocument(deps({ budget: { maxTokens: 1000 } }), { document: 'docs/prd.md' }),
      /run token budget reached: 1100 of 1000 tokens used \(raise budget\.maxTokens/,
    );
    assert.equal(server.requests.length, 1, 'the second attempt is never sent');
  });

  it('refuses a proposal with a dependency cycle, naming the tasks; acceptance refuses it too', async () => {
    server.push(
      planReply([
        proposed('a', { title: 'Add login', dependsOn: ['c'] }),
        proposed('b', { title: 'Session store', dependsOn: ['a'] }),
        proposed('c', { title: 'Logout', dependsOn: ['b'] }),
      ]),
    );
    const outcome = await planFromDocument(deps(), { document: 'docs/prd.md' });
    assert.deepEqual(outcome.problems, ['dependency cycle "Add login" → "Logout" → "Session store" → "Add login"']);
    assert.equal((events.at(-1) as { outcome: string }).outcome, 'refused');
    await assert.rejects(
      acceptPlan(store, outcome.draft),
      (error: unknown) => error instanceof PlanRefusedError && /"Add login" → "Logout"/.test(error.message),
    );
    assert.deepEqual(await store.list(), []);
    // the person breaks the cycle in the review: then it can be accepted
    const fixed = editPlannedTask(outcome.draft, 'a', { dependsOn: [] });
    assert.deepEqual(
      (await acceptPlan(store, fixed)).map((t) => [t.id, t.dependsOn]),
      [
        ['T-001', []],
        ['T-002', ['T-001']],
        ['T-003', ['T-002']],
      ],
    );
  });

  it("keeps the review's edits: edit, drop, reorder and merge, then saves all tasks at once in that order", async () => {
    await store.add({ title: 'Existing', prompt: 'p', promise: 'q' });
    server.push(
      planReply([
        ...SHOP_PLAN,
        proposed('styles', { title: 'Styles', dependsOn: ['cart', 'T-001'] }),
        proposed('docs', { title: 'Docs', type: 'docs', dependsOn: ['styles'] }),
      ]),
    );
    let draft = (await planFromDocument(deps(), { document: 'docs/prd.md', section: 'sign-in' })).draft;
    assert.equal(draft.section, 'Sign-in');
    draft = editPlannedTask(draft, 'login-form', { title: 'Sign-in form (edited)', promise: 'edited promise', check: '', type: undefined });
    assert.equal(draft.tasks[0].type, 'feature', 'a field left out is not edited');
    draft = editPlannedTask(draft, 'lockout', { type: 'security' });
    draft = dropPlannedTask(draft, 'docs');
    draft = mergePlannedTasks(draft, 'cart', 'styles');
    draft = movePlannedTask(draft, 'cart', 0);
    const tasks = await acceptPlan(store, draft);
    assert.deepEqual(
      tasks.map((t) => [t.id, t.title, t.priority]),
      [
        ['T-002', 'Persistent cart + Styles', 100],
        ['T-003', 'Sign-in form (edited)', 101],
        ['T-004', 'Account lockout', 102],
      ],
    );
    const [cart, login, lockout] = tasks;
    assert.equal(login.promise, 'edited promise');
    assert.equal(login.check, undefined, 'an emptied check is no check');
    assert.deepEqual(cart.dependsOn, ['T-001'], 'the merged task keeps the outside dependency, not itself');
    assert.equal(cart.complexity, 8);
    assert.match(cart.prompt, /Implement styles\./);
    assert.deepEqual(lockout.dependsOn, ['T-003']);
    assert.match(
      lockout.prompt,
      /This is part 2 of 2 of "Sign-in", split because lockout needs its own store and tests\. Do only this part\./,
    );
    assert.equal(lockout.source, 'docs/prd.md#sign-in');
    assert.equal(lockout.type, 'security');
    assert.equal(login.type, 'feature');
    // saved in dependency order in one write; accepting the same plan again is refused
    assert.deepEqual(
      (await store.list()).map((t) => t.id),
      ['T-001', 'T-002', 'T-003', 'T-004'],
    );
    await assert.rejects(acceptPlan(store, draft), /already in \.ralph\/tasks\.json as T-002 \(same title and source\)/);
  });

  it('refuses a document outside the workspace, a section it does not have, and one too large for the context', async () => {
    const outside = path.join(await ws.outsideDir(), 'prd.md');
    await fs.writeFile(outside, PRD);
    await assert.rejects(planFromDocument(deps(), { document: outside }), /is outside the workspace .*put it in the repository/);
    await assert.rejects(planFromDocument(deps(), { document: 'docs/missing.md' }), /docs\/missing\.md does not exist/);
    await assert.rejects(
      planFromDocument(deps(), { document: 'docs/prd.md', section: 'Billing' }),
      /has no section "Billing"; its headings: Shop PRD, Sign-in, Cart, Out of scope/,
    );
    await ws.write('docs/big.md', `# Big\n\n## One\n${'word '.repeat(20000)}\n## Two\nmore\n`);
    await assert.rejects(
      planFromDocument(deps({ llm: { contextWindow: 8000 } }), { document: 'docs/big.md' }),
      /too large to plan in one call .*--section, e\.g\. "Big"/,
    );
    assert.equal(server.requests.length, 0, 'no model call for bad input');
  });
});
