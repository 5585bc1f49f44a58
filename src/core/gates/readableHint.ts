/**
 * How to make a test gate's output readable (issue 47), said where the gate is shown when Ralph
 * read no test names or counts from it: for the runners its command calls — itself or through the
 * package.json scripts it runs (`npm test`, `npm run x`, `yarn x`, `pnpm x`, and the scripts those
 * run) — the reporter flag that makes each one print what Ralph reads; for a runner it cannot tell,
 * the general sentence. `docs/test-runners.md` has the same table.
 */

/** The general sentence: the runner could not be told from the command. */
export const READABLE =
  'To have its tests read, make the runner print each test by name with the counts (a reporter flag: TAP, a spec or verbose reporter), or have it write JUnit XML and name the file in the gate\'s `report` (`"report": { "junit": "reports/junit.xml" }`; see docs/test-runners.md).';

/** For a runner that writes JUnit XML with a flag of its own: the flag and the gate's `report`. */
const junit = (runner: string, flag: string) =>
  `${runner}: add \`${flag}\` to the gate's command and \`"report": { "junit": "reports/junit.xml" }\` to the gate`;

interface Runner {
  /** Whether the word at `i` of a command's words (paths stripped) calls it. */
  calls(w: string, words: readonly string[], i: number): boolean;
  hint: string;
}

const RUNNERS: readonly Runner[] = [
  {
    calls: (w) => w === 'uvu',
    hint: "uvu's default reporter is read (its `Total:`/`Passed:`/`Skipped:` block and `FAIL` lines): this run printed no summary — it stopped before it (a file that throws on import stops the CLI)",
  },
  {
    calls: (w) => w === 'jasmine',
    hint: "jasmine's default console reporter is read (`N specs, M failures` and its `Failures:` list): this run printed no summary — it stopped before it (a spec file that throws on import stops it), or another reporter replaced it",
  },
  {
    calls: (w, words, i) => w === '--test' && words.slice(Math.max(0, i - 4), i).includes('node'),
    hint: 'node --test: add `--test-reporter=spec` (or `tap`)',
  },
  { calls: (w) => w === 'mocha' || w === '_mocha', hint: 'mocha: add `--reporter spec`' },
  { calls: (w) => w === 'jest', hint: 'jest: add `--verbose`' },
  { calls: (w) => w === 'vitest', hint: 'vitest: add `--reporter=verbose`' },
  { calls: (w) => w === 'ava', hint: 'ava: add `--verbose`' },
  {
    calls: (w) => w === 'tap' || w === 'tape',
    hint: 'tap/tape: TAP is read — let the runner print it (`tap --reporter=tap`; no `| tap-spec`, `| faucet` or other formatter after `tape`)',
  },
  {
    calls: (w, words, i) => w === 'bun' && words[i + 1] === 'test',
    hint: junit('bun test', '--reporter=junit --reporter-outfile=reports/junit.xml'),
  },
  { calls: (w, words, i) => w === 'deno' && words[i + 1] === 'test', hint: junit('deno test', '--junit-path=reports/junit.xml') },
  {
    calls: (w, words, i) => w === 'playwright' && words[i + 1] === 'test',
    hint: junit('Playwright', '--reporter=junit') + ' with `PLAYWRIGHT_JUNIT_OUTPUT_FILE=reports/junit.xml` in its environment',
  },
  {
    calls: (w) => w === 'phpunit',
    hint: junit('PHPUnit', '--log-junit reports/junit.xml'),
  },
  {
    calls: (w) => w === 'pytest' || w === 'py.test',
    hint: 'pytest: add `-v` (and no `-qq`, which drops the summary line)',
  },
];

const REPORTER_FLAG = /^(?:--reporter|-R|--test-reporter|--reporters)$/;

/** Scripts a command runs: `npm test`, `npm run x`, `npm run-script x`, `yarn x`, `yarn run x`, `pnpm x`, `pnpm run x`. */
function scriptsRun(words: readonly string[], scripts: Readonly<Record<string, string>>): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const tool = words[i];
    if (tool !== 'npm' && tool !== 'yarn' && tool !== 'pnpm') continue;
    let j = i + 1;
    while (words[j]?.startsWith('-')) j++;
    const verb = words[j];
    const name =
      verb === 'test' || verb === 't' ? 'test' : verb === 'run' || verb === 'run-script' ? words[j + 1] : tool !== 'npm' ? verb : undefined;
    if (name && scripts[name] !== undefined) out.push(scripts[name]);
  }
  return out;
}

/** The words of a command and of the scripts it runs, transitively (each script once). */
function commandWords(command: string, scripts: Readonly<Record<string, string>>): string[] {
  const seen = new Set<string>();
  const words: string[] = [];
  const pending = [command];
  while (pending.length) {
    const text = pending.pop()!;
    if (seen.has(text)) continue;
    seen.add(text);
    const own = text.split(/[\s;&|()]+/).filter(Boolean);
    words.push(...own, '');
    pending.push(...scriptsRun(own, scripts));
  }
  return words.map((w) => w.replace(/^['"]|['"]$/g, '').replace(/^.*[\\/]/, ''));
}

/** The sentence a gate's summary ends with when its output was not read, for the runners its command calls. */
export function readableHint(command: string, scripts: Readonly<Record<string, string>> = {}): string {
  const words = commandWords(command, scripts);
  // a reporter's name given to a flag (`mocha --reporter tap`) is not a runner called
  const called = (r: Runner) => words.some((w, i) => !REPORTER_FLAG.test(words[i - 1] ?? '') && r.calls(w, words, i));
  const hints = RUNNERS.filter(called).map((r) => r.hint);
  if (hints.length === 0) return READABLE;
  return `To have its tests read: ${hints.join('; ')} (see docs/test-runners.md).`;
}
