/**
 * The real-repository tier (issue 33): every case of `../shared/realrepos/`, through the real
 * `ralph` CLI and a scripted agent, in the default parallel configuration and with maxParallel 1.
 * See README.md beside this file for what runs, how long it takes and the variables that steer it.
 */
import { cpus } from 'node:os';
import { dataOf } from './caseData';
import { loadCases } from './cases';
import { actualOf, unmet } from './expectations';
import { installAll, type Installed } from './install';
import { agentCliOrSkip, pinnedAgentCli } from '../unit/helpers/agentClis';
import { keyOf, labelOf, type Outcome, type Run, runScenario, runsOf, SLOW_SUITE_SECONDS } from './scenarios';
import { consoleTable, renderProblems, type VerdictRow, writeDoc } from './verdicts';
import { removeGateRuns } from './workspace';

const JOBS = Number(process.env.RALPH_REALREPOS_JOBS) || Math.min(4, cpus().length + 1);

type Settled = { outcome: Outcome } | { error: Error };

/** At most `jobs` scenarios at once, in the order given; each result kept settled so none is an unhandled rejection. */
function pool(jobs: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (work: () => Promise<Outcome>): Promise<Settled> => {
    if (active < jobs) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve)); // the slot is handed over, still counted
    try {
      return { outcome: await work() };
    } catch (error) {
      return { error: error instanceof Error ? error : new Error(String(error)) };
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

describe('real repositories: the ralph CLI on real bug-fix commits (issue 33)', function () {
  const cases = loadCases();
  const results = new Map<string, Promise<Settled>>();
  const rows = new Map<string, VerdictRow>();
  let installed: Map<string, Installed> | undefined;
  const tierStarted = Date.now();

  before('install each case once (cached), then start every scenario', async function () {
    this.timeout(20 * 60_000);
    installed = await installAll(cases, (line) => console.log(`      [realrepos] ${line}`));
    for (const c of cases) {
      const gate = dataOf(c).gate;
      if (gate) console.log(`      [realrepos] ${c.id}: the tests gate is \`${gate.command}\`, not \`${c.test}\`: ${gate.why}`);
    }
    // the many short runs side by side first (npm test runs this tier beside the integration and
    // end-to-end tiers), then a slow suite's runs one at a time with the machine to themselves:
    // beside other suites its whole runs take minutes longer (node-tap's per-file timeout trips,
    // and the lifted re-run is one more whole suite), close to each run's deadline on a slow machine
    const slow = cases.filter((c) => c.suiteSeconds > SLOW_SUITE_SECONDS);
    const run = pool(JOBS);
    const startOne = (c: (typeof cases)[number], [s, k, a]: Run, runner: ReturnType<typeof pool>) => {
      // a CLI that is not installed: its run is skipped, or fails under CI (in its test, below)
      if (a !== 'builtin' && !pinnedAgentCli(a).installed) return;
      const modules = installed!.get(c.id)!.nodeModules;
      results.set(
        keyOf(c, s, k, a),
        runner(() => runScenario(c, modules, [s, k, a], process.env.RALPH_REALREPOS_KEEP === '1')),
      );
    };
    const start = (c: (typeof cases)[number], runner: ReturnType<typeof pool>) => {
      for (const r of runsOf(c)) startOne(c, r, runner);
    };
    // the short cases' runs in turns, one of each case at a time: a case's later runs start once
    // its first has run the case's base and kept it in the tier's shared gate runs (workspace.ts)
    const turns = cases.filter((c) => !slow.includes(c)).map((c) => runsOf(c).map((r) => ({ c, r })));
    for (let i = 0; turns.some((t) => i < t.length); i++) for (const t of turns) if (i < t.length) startOne(t[i].c, t[i].r, run);
    const shortDone = Promise.all([...results.values()]);
    const alone = pool(1);
    for (const c of slow) start(c, (work) => shortDone.then(() => alone(work)));
  });

  after('the table of verdicts', async function () {
    this.timeout(60_000);
    await removeGateRuns();
    const table = cases.flatMap((c) => runsOf(c).map(([s, k, a]) => rows.get(keyOf(c, s, k, a)))).filter((r): r is VerdictRow => !!r);
    if (table.length === 0) return;
    console.log(`\n  Verdicts on real repositories (${JOBS} scenario(s) at a time)\n`);
    console.log(consoleTable(table).replace(/^/gm, '  '));
    const slowest = [...table].sort((a, b) => b.seconds - a.seconds).slice(0, 10);
    const runSeconds = table.reduce((sum, r) => sum + r.seconds, 0);
    console.log(
      `\n  Time: ${((Date.now() - tierStarted) / 1000).toFixed(0)} s wall, ${runSeconds.toFixed(0)} s of runs; the slowest runs:`,
    );
    for (const r of slowest) console.log(`    ${r.seconds.toFixed(0).padStart(5)} s  ${r.caseId} · ${r.scenario} · ${r.config}`);
    const problems = renderProblems(table);
    if (problems) console.log(`\n  Not as issue 33 expects:\n${problems.replace(/^/gm, '  ')}`);
    if (process.env.RALPH_REALREPOS_WRITE_DOC === '1') await writeDoc(table, new Date());
  });

  for (const c of cases)
    describe(`${c.id} (${c.runner}, ${c.language}, suite ~${c.suiteSeconds} s)`, () => {
      for (const [s, k, a] of runsOf(c))
        it(`${labelOf(s, a)} · ${k.label} → ${s.expect}`, async function () {
          this.timeout(60 * 60_000); // each run has its own deadline; this only bounds the wait for its turn
          if (a !== 'builtin') agentCliOrSkip(a, this);
          const settled = await results.get(keyOf(c, s, k, a))!;
          const row: VerdictRow = {
            caseId: c.id,
            runner: c.runner,
            scenario: labelOf(s, a),
            config: k.label,
            expected: s.expect,
            actual: 'error',
            ok: false,
            problems: [],
            seconds: 0,
          };
          rows.set(keyOf(c, s, k, a), row);
          if ('error' in settled) {
            row.problems = [`the scenario could not run: ${settled.error.message}`];
            throw settled.error;
          }
          const o = settled.outcome;
          Object.assign(row, { actual: actualOf(o), seconds: o.seconds, problems: await unmet(c, s, k, o) });
          row.ok = row.problems.length === 0;
          if (!row.ok)
            throw new Error(
              `${row.problems.join('\n')}\n(run took ${o.seconds.toFixed(0)} s; exit ${o.cli.code}; workspace ${o.workspace}${process.env.RALPH_REALREPOS_KEEP === '1' ? ' kept' : ''})\n--- ralph run output (tail) ---\n${o.cli.stdout.slice(-1500)}${o.cli.stderr.slice(-600)}`,
            );
        });
    });
});
