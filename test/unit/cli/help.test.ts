/**
 * The CLI's help, its mistakes and its completion (issue 49), against the one list of verbs
 * (src/cli/verbs.ts) and the usage texts written beside the parsers: `ralph --help` short and
 * grouped, each verb's page, an unknown verb with the closest one (exit 2, never a stack trace),
 * and a bash completion script that loads and completes a verb and a task id.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { parseCli } from '../../../src/cli/args';
import { completions, completionScript, SHELLS } from '../../../src/cli/completion';
import { mainHelp, usageLine, usageVerbs, verbHelp } from '../../../src/cli/help';
import { closest, GROUPS, VERBS } from '../../../src/cli/verbs';
import { CLI, runCli } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

describe('the CLI: help pages, did-you-mean and completion (issue 49)', function () {
  this.timeout(60_000);
  let ws: TempWorkspace | undefined;
  afterEach(async () => ws?.cleanup());

  it('ralph --help: what it is, every verb in its group, one line each, at most 40 lines', () => {
    const page = mainHelp();
    assert.ok(page.split('\n').length <= 40, `${page.split('\n').length} lines`);
    for (const title of Object.values(GROUPS)) assert.match(page, new RegExp(`^${title.replace(/[()]/g, '\\$&')}:$`, 'm'));
    for (const verb of VERBS) {
      const [first, second] = verb.name.split(' ');
      const rows = page.split('\n').filter((l) => /^ {2}\S/.test(l) && l.trim().split(/\s+/)[0] === first);
      assert.ok(
        rows.some((l) => !second || l.trim().split(/\s+/)[1].split('|').includes(second)),
        `${verb.name} is listed`,
      );
    }
    for (const argv of [[], ['--help'], ['-h'], ['help']]) assert.deepEqual(parseCli(argv, '/w'), { kind: 'help' });
  });

  it('the verb list and the usage texts beside the parsers name the same verbs', () => {
    assert.deepEqual([...usageVerbs()].sort(), VERBS.map((v) => v.name).sort());
  });

  it('every verb has a page: its usage from the usage texts, its exit codes, its examples; help <verb>, <verb> --help and task <verb> --help agree', () => {
    for (const verb of VERBS) {
      const page = verbHelp(verb.name);
      assert.match(page, new RegExp(`^ralph ${verb.name} — `), verb.name);
      assert.match(page, new RegExp(`^ {2}${verb.name}\\b`, 'm'), `${verb.name}: its usage entry`);
      assert.match(page, /Exit codes:|exit 0/, `${verb.name}: its exit codes`);
      for (const example of verb.examples ?? []) assert.ok(page.includes(example));
      const words = verb.name.split(' ');
      assert.deepEqual(parseCli(['help', ...words], '/w'), { kind: 'help', verb: verb.name });
      assert.deepEqual(parseCli([...words, '--help'], '/w'), { kind: 'help', verb: verb.name });
    }
    assert.match(verbHelp('run'), /--unattended/);
    assert.doesNotMatch(verbHelp('task retry'), /task delete/, "only that verb's page");
    assert.match(verbHelp('task'), /task add +add a task/);
  });

  it('an unknown verb or sub-verb: exit 2, what was wrong, the closest verb, its usage line — no stack trace', async () => {
    assert.equal(closest('stauts', ['status', 'run', 'schema']), 'status');
    assert.equal(closest('xyzzy', ['status', 'run']), undefined);
    assert.throws(() => parseCli(['stauts'], '/w'), /unknown command "stauts": did you mean `ralph status`\?/);
    assert.throws(() => parseCli(['task', 'retyr', 'T-1'], '/w'), /unknown task command "retyr": did you mean `ralph task retry`\?/);
    const typo = await runCli(['review', 'aprove', 'T-1'], '/');
    assert.equal(typo.code, 2);
    assert.match(
      typo.stderr,
      /^ralph: unknown review command "aprove": did you mean `ralph review approve`\?\n\nUsage: ralph review approve <id>\n/,
    );
    assert.doesNotMatch(typo.stderr, /at .*\.js:\d+/, 'no stack trace');
    const option = await runCli(['status', '--frobnicate'], '/');
    assert.equal(option.code, 2);
    assert.match(option.stderr, /Unknown option '--frobnicate'[\s\S]*Usage: ralph status \[--json\]/);
    assert.ok(option.stderr.split('\n').length < 10, 'the usage of that verb, not the whole page');
    assert.match(usageLine('task'), /ralph task add\|list\|/);
    const misspelt = await runCli(['run', '--unatended'], '/');
    assert.equal(misspelt.code, 2);
    assert.match(misspelt.stderr, /Unknown option '--unatended'[\s\S]*\nDid you mean --unattended\?\nUsage: ralph run \[--task ID\]/);
  });

  it('--version; completion scripts for bash, zsh and fish; __complete offers verbs, sub-verbs, options and task ids', async () => {
    assert.match((await runCli(['--version'], '/')).stdout, /^\d+\.\d+\.\d+\n$/);
    for (const shell of SHELLS) assert.match(completionScript(shell), /__complete/);
    assert.throws(() => parseCli(['completion', 'tcsh'], '/w'), /completion needs the shell: ralph completion bash\|zsh\|fish/);
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    assert.equal((await runCli(['init'], ws.dir)).code, 0);
    for (const title of ['One', 'Two'])
      assert.equal((await runCli(['task', 'add', title, '--prompt', 'p', '--promise', 'q'], ws.dir)).code, 0);
    assert.ok((await completions(['st'], ws.dir)).includes('status'));
    assert.ok((await completions(['task', ''], ws.dir)).includes('retry'));
    assert.deepEqual((await completions(['task', 'retry', ''], ws.dir)).slice(0, 2), ['T-001', 'T-002']);
    assert.deepEqual(await completions(['run', '--task', ''], ws.dir), ['T-001', 'T-002']);
    const runOptions = await completions(['run', ''], ws.dir);
    for (const option of ['--task', '--json', '--unattended', '--workspace']) assert.ok(runOptions.includes(option), option);
    assert.ok(!runOptions.includes('--hard'), "the options of run's usage, not the words of its descriptions");
    assert.deepEqual(parseCli(['__complete', 'run', '--workspace', '/x', ''], '/w'), {
      kind: 'complete',
      workspace: '/x',
      words: ['run', '--workspace', '/x', ''],
    });
  });

  it('the bash completion script loads (bash -c "source <(ralph completion bash)") and completes a verb and a task id', async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    assert.equal((await runCli(['init'], ws.dir)).code, 0);
    assert.equal((await runCli(['task', 'add', 'One', '--prompt', 'p', '--promise', 'q'], ws.dir)).code, 0);
    const script = [
      `ralph() { "${process.execPath}" "${CLI}" "$@"; }`,
      'source <(ralph completion bash)',
      'COMP_WORDS=(ralph stat); COMP_CWORD=1; _ralph; echo "verb: ${COMPREPLY[*]}"',
      'COMP_WORDS=(ralph task retry T-0); COMP_CWORD=3; _ralph; echo "id: ${COMPREPLY[*]}"',
      'complete -p ralph',
    ].join('\n');
    const out = execFileSync('bash', ['-c', script], { cwd: ws.dir, encoding: 'utf8' });
    assert.match(out, /^verb: status$/m);
    assert.match(out, /^id: T-001$/m);
    assert.match(out, /complete -o default -F _ralph ralph/);
  });
});
