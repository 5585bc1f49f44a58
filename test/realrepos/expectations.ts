/**
 * What issue 33 expects of each scenario, checked on what the run left: the task's final status,
 * the target branch, the task's record, and what the scripted model was told in iteration 2.
 */
import { dataOf } from './caseData';
import { caseTrees, type RealCase } from './cases';
import type { Config, Outcome, Scenario } from './scenarios';

/** A refused COMPLETE ends a bounded task as one of these; never `done`. */
export const NOT_DONE_ENDS = ['timeout', 'needs_help'];

/** Every unmet expectation of the scenario, as sentences (empty: all met). */
export async function unmet(c: RealCase, scenario: Scenario, config: Config, o: Outcome): Promise<string[]> {
  const problems: string[] = [];
  const data = dataOf(c);
  if (!/^=== \.ralph\/reports\/[^/\n]+\/final\.md$/m.test(o.record))
    problems.push("the task's record has no final report (.ralph/reports/<id>/final.md)");
  if (o.cli.timedOut) problems.push(`ralph run did not end within its deadline (killed after ${o.cli.seconds.toFixed(0)} s)`);
  if (o.toolErrors.length)
    problems.push(`the agent's tool calls failed (the scenario never happened): ${o.toolErrors.join(' | ').slice(0, 400)}`);
  if (o.agent !== 'builtin') problems.push(...signalProblems(o));
  if (data.reads) problems.push(...readingProblems(data.reads, scenario, o.record));
  const iteration2 = o.contexts[1];
  if (scenario.expect === 'done') {
    const iterations = scenario.id === 'fix-then-complete' ? 2 : 1;
    if (o.status !== 'done') problems.push(`ended ${o.status} after ${o.iterations} iteration(s)${gateSaid(o.record)}${reasonOf(o)}`);
    else if (o.iterations !== iterations) problems.push(`done, but in ${o.iterations} iterations instead of ${iterations}`);
    if (scenario.id === 'fix-then-complete') problems.push(...scopeProblems(c, config, o.record));
    const trees = await caseTrees(c);
    for (const [file, upstream] of trees.sourceFixed) {
      const onTarget = o.targetFiles.get(file);
      if (!onTarget?.equals(upstream)) problems.push(`${file} on the target branch is not the upstream file byte for byte`);
    }
    if (scenario.id === 'fix-with-legacy-red' && !namesPreExisting(o.record, data.legacyName!))
      problems.push(`the task's record does not name the legacy test "${data.legacyName}" pre-existing`);
  } else {
    if (!NOT_DONE_ENDS.includes(o.status))
      problems.push(
        `ended ${o.status} after ${o.iterations} iteration(s), expected not done (${NOT_DONE_ENDS.join(' or ')})${gateSaid(o.record)}`,
      );
    if (config.maxParallel > 1 && o.targetTip !== o.base) problems.push('the target branch moved: the work landed');
    if (scenario.id === 'no-change') {
      if (!iteration2) problems.push('there was no iteration 2 (its context could not name the failing test)');
      else {
        if (!data.testNamed.some((n) => iteration2.includes(n)))
          problems.push(`iteration 2's context names no failing test (${data.testNamed.join(' / ')})`);
        if (!data.errorShown.some((e) => iteration2.includes(e)))
          problems.push(`iteration 2's context shows no failing test's error (${data.errorShown.join(' / ')})`);
      }
    }
    if (scenario.id === 'runner-config') problems.push(...runnerConfigProblems(c, o.record, data.runnerConfig!.key));
    if (scenario.id === 'transitive-break') problems.push(...transitiveProblems(c, config, o.record, data.transitive!.through));
    if (scenario.id === 'assertions-deleted') {
      const trees = await caseTrees(c);
      if (!iteration2) problems.push('there was no iteration 2 (its context could not say what to restore)');
      else if (!trees.testFiles.some((f) => iteration2.includes(f)) || !/restore/i.test(iteration2))
        problems.push(`iteration 2's context does not tell the agent to restore ${trees.testFiles.join(', ')}`);
    }
  }
  return problems;
}

/** The case whose suite names its test files and whose tests import the modules they test: its part must be a part. */
const NARROWED: Record<string, string> = { 'node-semver-e583226': 'npx tap ' };

/**
 * Issue 34 on a real suite: iteration 1's tests gate says its scope — a part where the suite is
 * known before it (maxParallel 1) and the case's runner and tests allow one, the whole suite and
 * why otherwise; the COMPLETE of iteration 2 is judged on the whole suite.
 */
function scopeProblems(c: RealCase, config: Config, record: string): string[] {
  const events = gateEvents(record);
  const first = events.find((e) => e.type === 'gate.finished' && e.iteration === 1);
  const second = events.find((e) => e.type === 'gate.finished' && e.iteration === 2);
  const started = events.find((e) => e.type === 'gate.started' && e.iteration === 1);
  const problems: string[] = [];
  if (!first?.scope) problems.push("iteration 1's gate result says nothing of its scope");
  else if (first.scope.kind === 'full' && !first.scope.why) problems.push('iteration 1 ran the whole suite without saying why');
  const narrowed = NARROWED[c.id];
  if (narrowed && config.maxParallel === 1 && !(first?.scope?.kind === 'affected' && started?.command?.startsWith(narrowed)))
    problems.push(
      `iteration 1 did not run a part of the suite through \`${narrowed}<files>\` (${JSON.stringify(first?.scope)}, \`${started?.command}\`)`,
    );
  if (second?.scope?.kind !== 'full')
    problems.push(`iteration 2's COMPLETE was not judged on the whole suite (${JSON.stringify(second?.scope)})`);
  return problems;
}

/**
 * Issue 34 on a real suite: a change to the runner's config runs the whole suite in iteration 1
 * (and says so: by the config's file where the runner could have run a part), and the refusal
 * names the part of the gate's definition that changed since the task's base.
 */
function runnerConfigProblems(c: RealCase, record: string, key: string): string[] {
  const problems: string[] = [];
  const first = gateEvents(record).find((e) => e.type === 'gate.finished' && e.iteration === 1);
  const file = key.split(' ')[0];
  if (first?.scope?.kind !== 'full' || !first.scope.why)
    problems.push(`iteration 1 did not run the whole suite with a reason (${JSON.stringify(first?.scope)})`);
  else if (NARROWED[c.id] && !first.scope.why.includes(file))
    problems.push(`iteration 1's reason for the whole suite does not name \`${file}\`: ${first.scope.why}`);
  if (!record.split('\n').some((line) => line.includes(`\`${key}\``) && line.includes("since the task's base")))
    problems.push(`the task's record does not say \`${key}\` changed since the task's base`);
  return problems;
}

/**
 * Issue 34 on a real suite: a break a test file reaches only through another module — iteration
 * 1's part (where the suite is known before it and the case allows one) runs that test file, and
 * the whole suite at iteration 2's COMPLETE is red.
 */
function transitiveProblems(c: RealCase, config: Config, record: string, through: string): string[] {
  const events = gateEvents(record);
  const started = events.find((e) => e.type === 'gate.started' && e.iteration === 1);
  const first = events.find((e) => e.type === 'gate.finished' && e.iteration === 1);
  const second = events.find((e) => e.type === 'gate.finished' && e.iteration === 2);
  const problems: string[] = [];
  const ranThrough = first?.scope?.kind === 'affected' && started?.command?.split(' ').includes(through);
  if (NARROWED[c.id] && config.maxParallel === 1 && !ranThrough)
    problems.push(
      `iteration 1's part did not run \`${through}\`, which reaches the break through another module (\`${started?.command}\`)`,
    );
  if (second?.scope?.kind !== 'full' || second.passed !== false)
    problems.push(`iteration 2's COMPLETE was not refused by a whole run of the suite (${JSON.stringify(second)})`);
  return problems;
}

/**
 * Issue 47: a runner read only as TAP has every run of its tests gate read (counts); one whose
 * output is not read has none read, says so, and where the diff rule holds a passing run leads
 * with the verdict (`not passed: …`), never with "passed".
 */
function readingProblems(reads: 'tap' | 'not read', scenario: Scenario, record: string): string[] {
  // a run stopped before its end (the merge queue's run of a task taken back meanwhile; on a busy
  // machine it is still going then) printed nothing to read either way: not counted
  const runs = gateEvents(record).filter((e) => e.type === 'gate.finished' && e.gate === 'tests' && e.summary !== 'tests was stopped');
  if (runs.length === 0) return ['the tests gate never ran'];
  if (reads === 'tap') {
    const unread = runs.filter((e) => !e.tests || e.tests.total === 0);
    return unread.length ? [`the tests gate's output was not read as TAP: "${unread[0].summary}"`] : [];
  }
  const problems: string[] = [];
  const read = runs.find((e) => e.tests || !/output not read|no test counts found/.test(e.summary ?? ''));
  if (read) problems.push(`the tests gate does not say its output was not read: "${read.summary}"`);
  const held = runs.find((e) => e.passed === false && e.summary?.startsWith('passed'));
  if (held) problems.push(`a tests gate that did not pass leads with "passed": "${held.summary}"`);
  if (scenario.id === 'assertions-deleted' && !runs.some((e) => e.summary?.startsWith('not passed: the task removes test code in')))
    problems.push(
      'no run of the tests gate says the diff rule held the test code it removes (`not passed: the task removes test code in …`)',
    );
  return problems;
}

function gateEvents(record: string): {
  type: string;
  gate?: string;
  iteration?: number;
  command?: string;
  passed?: boolean;
  summary?: string;
  tests?: { total: number; failed: number };
  scope?: { kind: string; why?: string; files?: number };
}[] {
  return record
    .split('\n')
    .filter((line) => line.startsWith('{"type":"gate.'))
    .map((line) => JSON.parse(line) as ReturnType<typeof gateEvents>[number]);
}

/**
 * An agent CLI's COMPLETE reaches Ralph through its MCP tool: each iteration from the agent's
 * first COMPLETE on must have one in the run log, or a not-done verdict would prove nothing.
 */
function signalProblems(o: Outcome): string[] {
  const signalled = new Set(
    o.record
      .split('\n')
      .filter((line) => line.startsWith('{"type":"signal"'))
      .map((line) => JSON.parse(line) as { iteration?: number; signal?: { kind?: string } })
      .filter((e) => e.signal?.kind === 'COMPLETE')
      .map((e) => e.iteration),
  );
  const missing = [];
  for (let i = o.completeAt; i <= o.iterations; i++) if (!signalled.has(i)) missing.push(i);
  return missing.length
    ? [`the agent's COMPLETE of iteration ${missing.join(', ')} is not in the run log (its MCP tool call never reached Ralph)`]
    : [];
}

function reasonOf(o: Outcome): string {
  const feedback = o.contexts[1] ? feedbackOf(o.contexts[1]) : '';
  // the gate's items (`- [tests] …`), without the loop's standing advice around them
  const items = feedback.includes('\n- [') ? feedback.slice(feedback.indexOf('\n- [') + 1) : feedback;
  const why = o.blockedReason ?? items;
  return why ? `: ${why.replace(/\s+/g, ' ').slice(0, 400)}` : '';
}

/** What an iteration's context says of the iteration before it (its outcome and the gate feedback). */
export function feedbackOf(context: string): string {
  const from = context.indexOf('## Previous iteration');
  if (from < 0) return '';
  const end = context.slice(from).search(/\n## (Recent commits|Now)\b/);
  return context.slice(from, end < 0 ? undefined : from + end).replace(/\(full output of [^)]*\)/g, '');
}

/** The last verdict of the tests gate in the run log, as the run printed it: ` (the gate passed: "…")`. */
function gateSaid(record: string): string {
  const finished = record
    .split('\n')
    .filter((line) => line.startsWith('{"type":"gate.finished"'))
    .map((line) => JSON.parse(line) as { summary?: string; passed?: boolean; tests?: { failing?: string[] } });
  const last = finished.at(-1);
  // the failing names first: a CI log keeps only the tail, and the workspace is gone with the machine
  const failing = last?.tests?.failing?.length ? `, failing ${last.tests.failing.slice(0, 5).join(' | ')}` : '';
  return last?.summary ? ` (the gate ${last.passed ? 'passed' : 'failed'}: "${last.summary}"${failing})` : '';
}

/** A line of the record that names the test and calls it pre-existing. */
export function namesPreExisting(record: string, name: string): boolean {
  return record.split('\n').some((line) => line.includes(name) && /pre-?existing/i.test(line));
}

/** How a scenario ended, for the table: `done (1 it.)`, `timeout (2 it.)`. */
export function actualOf(o: Outcome): string {
  return `${o.status} (${o.iterations} it.)`;
}
