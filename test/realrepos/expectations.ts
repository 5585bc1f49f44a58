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
  const iteration2 = o.contexts[1];
  if (scenario.expect === 'done') {
    if (o.status !== 'done') problems.push(`ended ${o.status} after ${o.iterations} iteration(s)${reasonOf(o)}`);
    else if (o.iterations !== 1) problems.push(`done, but in ${o.iterations} iterations instead of one`);
    const trees = await caseTrees(c);
    for (const [file, upstream] of trees.sourceFixed) {
      const onTarget = o.targetFiles.get(file);
      if (!onTarget?.equals(upstream)) problems.push(`${file} on the target branch is not the upstream file byte for byte`);
    }
    if (scenario.id === 'fix-with-legacy-red' && !namesPreExisting(o.record, data.legacyName))
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
    if (scenario.id === 'assertions-deleted') {
      const trees = await caseTrees(c);
      if (!iteration2) problems.push('there was no iteration 2 (its context could not say what to restore)');
      else if (!trees.testFiles.some((f) => iteration2.includes(f)) || !/restore/i.test(iteration2))
        problems.push(`iteration 2's context does not tell the agent to restore ${trees.testFiles.join(', ')}`);
    }
  }
  return problems;
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
    .map((line) => JSON.parse(line) as { summary?: string; passed?: boolean });
  const last = finished.at(-1);
  return last?.summary ? ` (the gate ${last.passed ? 'passed' : 'failed'}: "${last.summary}")` : '';
}

/** A line of the record that names the test and calls it pre-existing. */
export function namesPreExisting(record: string, name: string): boolean {
  return record.split('\n').some((line) => line.includes(name) && /pre-?existing/i.test(line));
}

/** How a scenario ended, for the table: `done (1 it.)`, `timeout (2 it.)`. */
export function actualOf(o: Outcome): string {
  return `${o.status} (${o.iterations} it.)`;
}
