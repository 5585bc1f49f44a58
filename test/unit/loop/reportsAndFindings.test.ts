import assert from 'node:assert/strict';
import type { SafeguardWarning } from '../../../src/core/ports';
import type { RecordedRequest, Step } from '../../fixtures/scriptedServer';
import { eventsOf, type LoopHarness, makeLoopHarness, requestText } from '../helpers/loopHarness';
import { completeStep, projectHarness, requestAfter, writeStep } from '../helpers/verdictProjects';

const progress = (percent = 30): Step => ({ content: `working on it <ralph>PROGRESS:${percent}</ralph>` });

/** A SARIF scan with one finding per severity given (SARIF levels: error → high, warning → medium, note → low). */
function sarif(findings: { level: 'error' | 'warning' | 'note'; text: string; id: string }[]): string {
  return JSON.stringify({
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'scanner', rules: findings.map((f) => ({ id: f.id })) } },
        results: findings.map((f) => ({
          ruleId: f.id,
          level: f.level,
          message: { text: f.text },
          locations: [{ physicalLocation: { artifactLocation: { uri: 'src/app.js' } } }],
        })),
      },
    ],
  });
}
const SECURITY_GATE = { name: 'scan', command: 'cat scan.sarif', kind: 'security' as const, required: true };

describe('reports that tell the truth, and security findings by severity (seed 003)', function () {
  this.timeout(120000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('the report of the last iteration of a timed-out task says TIMEOUT; the final report is INCOMPLETE, files as counts', async () => {
    h = await projectHarness([writeStep('notes.txt', 'half done\n'), progress()], {
      files: { 'README.md': '# x\n' },
      config: { loop: { maxIterations: 1 } },
    });
    const id = await h.addTask();
    assert.equal((await h.runner().run()).results[0].status, 'timeout');
    const report = await h.ws.read(`.ralph/reports/${id}/iteration-1.md`);
    assert.match(report, /## Decision: TIMEOUT\nmax iterations \(1\) reached \(the iteration's own verdict: no completion signal\)/);
    const final = await h.ws.read(`.ralph/reports/${id}/final.md`);
    assert.match(final, /- Status: \*\*INCOMPLETE\*\* \(timeout\) — max iterations \(1\) reached/);
    assert.match(final, /## Files changed\n\*\*Created: 1\*\*\n- `notes\.txt`\n\n\*\*Modified: 0\*\*/);
  });

  it('the report of the iteration after which a task halted on its budget says HALT; the final report is HALTED, money to three significant digits', async () => {
    h = await projectHarness([progress(), progress()], {
      files: { 'README.md': '# x\n' },
      config: { llm: { prices: { 'model-a': { input: 10, output: 10 } } }, budget: { taskMaxTokens: 10 }, loop: { maxIterations: 3 } },
    });
    const id = await h.addTask();
    assert.equal((await h.runner().run()).results[0].status, 'halted');
    const report = await h.ws.read(`.ralph/reports/${id}/iteration-1.md`);
    assert.match(report, /## Decision: HALT\ntask T-001 token budget reached/);
    const final = await h.ws.read(`.ralph/reports/${id}/final.md`);
    assert.match(final, /- Status: \*\*HALTED\*\* \(halted\)/);
    // ~800 tokens at $10 per 1M: about $0.008 — three significant digits, not "$0.01"
    assert.match(final, /\| \*\*total\*\* \| 1 \| \d+ \| 0 \| \d+ \| \$0\.00\d{3} \|/);
  });

  it('a medium finding becomes a linked fix task, a low one a line in .ralph/observations.md and the final report; neither blocks', async () => {
    h = await projectHarness([completeStep('done', 'the scan shows no blocking finding')], {
      files: {
        'scan.sarif': sarif([
          { level: 'warning', text: 'Regular expression vulnerable to ReDoS', id: 'REDOS-1' },
          { level: 'note', text: 'Math.random used for an id', id: 'WEAK-RAND' },
        ]),
      },
      config: { gates: [SECURITY_GATE] },
    });
    const id = await h.addTask();
    assert.equal((await h.runner().run({ taskId: id })).results[0].status, 'done');
    const fix = await h.store.get(`${id}-fix-scan-medium`);
    assert.equal(fix.status, 'todo');
    assert.equal(fix.type, 'security');
    assert.equal(fix.proof, 'none');
    assert.match(fix.prompt, /Regular expression vulnerable to ReDoS in src\/app\.js \(REDOS-1\)/);
    const observations = await h.ws.read('.ralph/observations.md');
    assert.match(
      observations,
      new RegExp(
        `- \\d{4}-\\d\\d-\\d\\d, iteration 1: ${id} \\(gate scan\\): low security finding — Math\\.random used for an id in src/app\\.js \\(WEAK-RAND\\)`,
      ),
    );
    assert.doesNotMatch(
      h.ws.git('status', '--porcelain', '--untracked-files=all'),
      /observations\.md/,
      'the log is machine-local (.ralph/.gitignore): no task commits it, it leaves no tree dirty',
    );
    const final = await h.ws.read(`.ralph/reports/${id}/final.md`);
    assert.match(
      final,
      /## Observations \(low-severity findings\)\nLogged in `\.ralph\/observations\.md`; they never block a task\.\n\n- .*Math\.random used for an id/,
    );
    const report = await h.ws.read(`.ralph/reports/${id}/iteration-1.md`);
    assert.match(report, /\*\*medium\*\* Regular expression vulnerable to ReDoS REDOS-1 — a linked fix task/);
    assert.match(report, /\*\*low\*\* Math\.random used for an id WEAK-RAND — logged in \.ralph\/observations\.md/);
  });

  it('a high finding is fixed first and escalates the model at once', async () => {
    h = await projectHarness([completeStep('done'), writeStep('scan.sarif', sarif([])), completeStep('fixed the injection')], {
      files: { 'scan.sarif': sarif([{ level: 'error', text: 'SQL built from user input', id: 'SQLI-2' }]) },
      config: { gates: [SECURITY_GATE] },
    });
    const id = await h.addTask();
    assert.equal((await h.runner().run()).results[0].status, 'done');
    const escalations = eventsOf(h.events, 'escalation');
    assert.deepEqual(
      escalations.map((e) => [e.iteration, e.from, e.to]),
      [[1, 'model-a', 'model-b']],
    );
    assert.match(escalations[0].reason, /a high security finding: fixed first, on a stronger model/);
    assert.match(requestAfter(h, 1), /A high-severity security finding is open: fix it first, before any other item below/);
    assert.equal((await h.store.get(id)).iterations, 2);
  });

  it('a critical finding halts the task and a person decides before the next task starts (Stop: it does not)', async () => {
    h = await makeLoopHarness([completeStep()]);
    await h.ws.write(
      'scan.sarif',
      sarif([{ level: 'error', text: 'placeholder', id: 'X' }]).replace(
        '"level":"error"',
        '"level":"error","properties":{"security-severity":"9.8"}',
      ),
    );
    h.ws.git('add', '-A');
    h.ws.git('commit', '-qm', 'scan');
    await h.configure({ gates: [SECURITY_GATE] });
    const first = await h.addTask({ title: 'first' });
    const second = await h.addTask({ title: 'second' });
    const asked: SafeguardWarning[] = [];
    const summary = await h.runner({ safeguards: { decide: async (w) => (asked.push(w), { action: 'stop' }) } }).run();
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [[first, 'halted']],
    );
    assert.equal(asked.length, 1);
    assert.equal(asked[0].code, 'security-critical');
    assert.match(
      asked[0].message,
      new RegExp(
        `^${first} halted on a critical security finding: in src/app\\.js: placeholder \\(X\\); a person decides before the next task starts`,
      ),
    );
    assert.equal((await h.store.get(second)).status, 'todo');
    assert.match(summary.reason, /stopped after T-001 halted on a critical security finding/);
    assert.match(await h.ws.read(`.ralph/reports/${first}/iteration-1.md`), /## Decision: HALT/);
  });
});

describe('a critical finding in a parallel run (worktrees)', function () {
  this.timeout(120000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('no new agent starts until a person answers; Stop: the waiting task stays todo', async () => {
    const complete: Step = () => ({ toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'x' } }] });
    h = await makeLoopHarness(Array.from({ length: 8 }, () => complete));
    await h.ws.write(
      'scan.sarif',
      sarif([{ level: 'error', text: 'secret in the bundle', id: 'S' }]).replace(
        '"level":"error"',
        '"level":"error","properties":{"security-severity":"9.1"}',
      ),
    );
    h.ws.git('add', '-A');
    h.ws.git('commit', '-qm', 'scan');
    // two slots and one gate process: three tasks at work at most (P-3 may take a slot given away while
    // the first gates run, before any finding is known); P-4 could only start once an agent ended
    await h.configure({ loop: { maxParallel: 2, maxConcurrentGates: 1 }, gates: [SECURITY_GATE] });
    for (const id of ['P-1', 'P-2', 'P-3', 'P-4']) await h.addTask({ id, title: id });
    const asked: SafeguardWarning[] = [];
    const summary = await h.runner({ safeguards: { decide: async (w) => (asked.push(w), { action: 'stop' }) } }).run();
    const results = summary.results.map((r) => `${r.taskId}:${r.status}`).sort();
    assert.deepEqual(
      results.filter((r) => r !== 'P-3:halted'),
      ['P-1:halted', 'P-2:halted'],
      'the first two halted; P-3, at work already, went on as agents at work do, and halted on its own finding',
    );
    assert.equal(asked.filter((w) => w.code === 'security-critical').length, 1);
    assert.equal((await h.store.get('P-4')).status, 'todo', 'the task next in line never started');
  });
});

/** The merge queue's give-up is written into final.md: it never says COMPLETE for work that did not land. */
describe('final.md after the merge queue decides (parallel run, real worktrees)', function () {
  this.timeout(120000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  // each task writes its own number file
  const agent: Step = (request: RecordedRequest) => {
    const text = requestText(request);
    const write = /WRITE (\S+) (\d+)/.exec(text)!;
    const last = (request.body?.messages ?? []).at(-1);
    return last?.role === 'tool'
      ? { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${write[1]}`, promiseEvidence: 'written' } }] }
      : { toolCalls: [{ name: 'write_file', arguments: { path: write[1], content: write[2] } }] };
  };

  it("names only the task's own files once merged, not those of the tasks that landed before it", async () => {
    h = await makeLoopHarness(Array.from({ length: 8 }, () => agent));
    await h.configure({ loop: { maxParallel: 2, maxIterations: 3 } });
    await h.addTask({ id: 'A', title: 'one in a', prompt: 'WRITE a.num 1', promise: 'a.num' });
    await h.addTask({ id: 'B', title: 'two in b', prompt: 'WRITE b.num 2', promise: 'b.num' });
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done', 'done'],
    );
    // both started on the same commit; the second landed on top of the first
    for (const [id, own] of [
      ['A', 'a.num'],
      ['B', 'b.num'],
    ]) {
      const final = await h.ws.read(`.ralph/reports/${id}/final.md`);
      assert.match(final, new RegExp(`\\*\\*Created: 1\\*\\*\\n- \`${own.replace('.', '\\.')}\``), `${id}: ${final}`);
    }
  });

  it('says queued for merge when the agent finishes, then merged, or not merged and why', async () => {
    // the check is red once the numbers add up to more than 10
    h = await makeLoopHarness(Array.from({ length: 8 }, () => agent));
    await h.ws.write(
      'check.js',
      "const fs = require('fs');\nconst total = fs.readdirSync('.').filter((f) => f.endsWith('.num')).reduce((n, f) => n + Number(fs.readFileSync(f, 'utf8')), 0);\nconsole.log('total ' + total);\nprocess.exit(total > 10 ? 1 : 0);\n",
    );
    h.ws.git('add', '-A');
    h.ws.git('commit', '-qm', 'check');
    await h.configure({
      loop: { maxParallel: 2, maxIterations: 3 },
      merge: { maxReturns: 0 },
      gates: [{ name: 'check', command: 'node check.js', kind: 'custom', required: true }],
    });
    await h.addTask({ id: 'A', title: 'six in a', prompt: 'WRITE a.num 6', promise: 'a.num' });
    await h.addTask({ id: 'B', title: 'six in b', prompt: 'WRITE b.num 6', promise: 'b.num' });
    const summary = await h.runner().run();
    const statuses = Object.fromEntries(summary.results.map((r) => [r.taskId, r.status]));
    const merged = statuses.A === 'done' ? 'A' : 'B';
    const refused = merged === 'A' ? 'B' : 'A';
    assert.deepEqual([statuses[merged], statuses[refused]], ['done', 'needs_help'], JSON.stringify(summary.results));
    const landed = await h.ws.read(`.ralph/reports/${merged}/final.md`);
    assert.match(landed, /- Status: \*\*COMPLETE\*\* \(done\) — merged into main as/);
    assert.match(landed, /## Merge queue\nMerged: merged into main as/);
    const given = await h.ws.read(`.ralph/reports/${refused}/final.md`);
    assert.match(given, /- Status: \*\*INCOMPLETE\*\* \(needs help\) — not merged after 1 attempts/);
    assert.match(given, /## Merge queue\nNot merged \(failed, attempt 1\): required gates fail on the merged result/);
    assert.match(given, /\*\*Created: 1\*\*\n- `[ab]\.num`/, 'the files of its branch');
    const iteration = await h.ws.read(`.ralph/reports/${refused}/iteration-1.md`);
    assert.match(iteration, /## Decision: QUEUED FOR MERGE/);
  });
});
