/**
 * The CLI's help, its mistakes and its completion (issue 49), against the one definition of the
 * verbs (src/cli/verbs*.ts) from which commander's parser, the pages, completion and docs/cli.md
 * are made: `ralph --help` short and grouped, each verb's page walked against its definition, the
 * generated reference current, mistakes with exit 2 and the closest verb (never a stack trace),
 * and a bash completion script that loads and completes a verb and a task id.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { AGENT_KINDS } from '../../../src/core/agentKinds';
import { longFlag, parseCli, synopsis, verbCommand } from '../../../src/cli/args';
import { completions, completionScript, SHELLS } from '../../../src/cli/completion';
import { mainHelp, usageLine, verbHelp } from '../../../src/cli/help';
import { closest, GROUPS, VERBS } from '../../../src/cli/verbs';
import { CLI, CLI_ENV, REPO_ROOT, runCli, runCliInProcess } from '../helpers/cliHarness';
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

  it("the parser is the definition: each verb a commander command with the definition's arguments and options", () => {
    for (const verb of VERBS) {
      const command = verbCommand(verb.name);
      assert.equal(command.name(), verb.name.split(' ').at(-1), verb.name);
      assert.deepEqual(
        command.options.map((o) => o.long),
        (verb.options ?? []).map(longFlag),
        `${verb.name}: its options`,
      );
      assert.deepEqual(
        command.registeredArguments.map((a) => a.name()),
        (verb.args ?? []).map((a) => a.name.replace(/[<>[\].]/g, '')),
        `${verb.name}: its arguments`,
      );
    }
  });

  it('every page walked against the definition: summary, usage, arguments, options with choices and defaults, exit codes, examples', () => {
    for (const verb of VERBS) {
      const page = verbHelp(verb.name);
      assert.ok(page.startsWith(`ralph ${verb.name} — ${verb.summary}\n`), verb.name);
      assert.ok(page.includes(`Usage: ${synopsis(verb)}\n`), `${verb.name}: its usage`);
      for (const arg of verb.args ?? []) {
        const row = page.split('\n').find((l) => l.trim().split(/ {2,}/)[0] === arg.name.replace(/[<>[\].]/g, ''));
        assert.ok(row?.includes(arg.description), `${verb.name}: its argument ${arg.name}`);
      }
      for (const option of verb.options ?? []) {
        const row = page.split('\n').find((l) => l.startsWith(`  ${option.flags} `));
        assert.ok(row, `${verb.name}: ${option.flags} has its row`);
        const text = page
          .slice(page.indexOf(row))
          .split(/\n {2}-/)[0]
          .replace(/\s+/g, ' ');
        assert.ok(text.includes(option.description.split(' ').slice(0, 4).join(' ')), `${verb.name} ${option.flags}: its description`);
        if (option.default) assert.ok(text.includes(`(default: ${option.default})`), `${verb.name} ${option.flags}: its default`);
        if (option.choices)
          assert.ok(text.includes(option.choices.map((c) => `"${c}"`).join(', ')), `${verb.name} ${option.flags}: its choices`);
      }
      assert.ok(page.replace(/\s+/g, ' ').includes(verb.exits), `${verb.name}: its exit codes`);
      for (const example of verb.examples ?? []) assert.ok(page.includes(`  ${example}`), `${verb.name}: ${example}`);
      const words = verb.name.split(' ');
      assert.deepEqual(parseCli(['help', ...words], '/w'), { kind: 'help', verb: verb.name });
      assert.deepEqual(parseCli([...words, '--help'], '/w'), { kind: 'help', verb: verb.name });
      assert.deepEqual(parseCli([...words, '-h'], '/w'), { kind: 'help', verb: verb.name });
    }
    assert.match(verbHelp('run'), /--unattended/);
    assert.doesNotMatch(verbHelp('task retry'), /task delete/, "only that verb's page");
    assert.match(verbHelp('task'), /task add +add a task/);
  });

  it('ralph help <verb>, ralph <verb> --help and ralph task <sub> --help print that page (the built CLI)', async () => {
    for (const argv of [
      ['help', 'task', 'retry'],
      ['task', 'retry', '--help'],
      ['review', 'approve', '-h'],
      ['help', 'ci', 'init'],
    ]) {
      const result = await runCli(argv, '/');
      assert.equal(result.code, 0, argv.join(' '));
      const verb = argv.filter((w) => w !== 'help' && !w.startsWith('-')).join(' ');
      assert.equal(result.stdout, `${verbHelp(verb)}\n`, argv.join(' '));
    }
    const env = await runCli(['--help'], '/', { ...CLI_ENV, NO_COLOR: '1' });
    assert.equal(env.stdout, `${mainHelp()}\n`);
    assert.ok(!env.stdout.includes(String.fromCharCode(27)), 'no colour codes');
  });

  it('docs/cli.md holds the reference generated from the definition, as it is now', () => {
    const script = `import { generatedParts } from './scripts/docs/reference.mjs';
      import fs from 'node:fs';
      const part = (await generatedParts())['docs/cli.md'].usage;
      const text = fs.readFileSync('docs/cli.md', 'utf8');
      process.stdout.write(text.includes(part.trimEnd()) ? 'current' : 'stale');`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(out, 'current', 'run npm run docs');
    const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'cli.md'), 'utf8');
    for (const verb of VERBS) assert.ok(doc.includes(`#### ralph ${verb.name}\n`), verb.name);
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
      /^ralph: unknown review command "aprove": did you mean `ralph review approve`\?\n\nUsage: ralph review approve <id> \[--json\]\n/,
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
    // every other kind of mistake commander finds: exit 2, Ralph's words, the verb's usage, no stack trace
    const mistakes: [string[], RegExp][] = [
      [
        ['task', 'cancel', 'T-1', '--fresh'],
        /^ralph: Unknown option '--fresh': --fresh does not apply to task cancel\n\nUsage: ralph task cancel <id>/,
      ],
      [['task', 'retry'], /^ralph: task retry needs a task id: ralph task retry <id>\n\nUsage: ralph task retry <id> \[--fresh\]/],
      [
        ['task', 'add', 'T', '--prompt', 'p', '--promise', 'q', '--review', 'later'],
        /^ralph: --review must be one of manual, auto, got "later"\n/,
      ],
      [['task', 'edit', 'T-1', '--complexity', 'x'], /^ralph: --complexity must be a whole number from 1 to 14, got "x"\n/],
      [['status', 'extra'], /^ralph: unexpected argument "extra"\n\nUsage: ralph status \[--json\]/],
      [['plan', '--accept'], /^ralph: option '--accept <plan.json>' argument missing\n/],
      [['task'], /^ralph: ralph task needs one of its verbs: add, list, [\s\S]*Usage: ralph task add\|list\|/],
      [['help', 'frobnicate'], /^ralph: unknown command "frobnicate"/],
    ];
    // the bundle's own main in this process: a usage error is what main returns and writes, the same in a child
    for (const [argv, expected] of mistakes) {
      const result = await runCliInProcess(argv, '/');
      assert.equal(result.code, 2, argv.join(' '));
      assert.match(result.stderr, expected, argv.join(' '));
      assert.equal(result.stdout, '', argv.join(' '));
      assert.doesNotMatch(result.stderr, /at .*\.js:\d+|CommanderError/, 'no stack trace');
    }
  });

  it('--version; completion scripts for bash, zsh and fish; __complete offers verbs, sub-verbs, options and task ids', async () => {
    assert.match((await runCli(['--version'], '/')).stdout, /^\d+\.\d+\.\d+\n$/);
    for (const shell of SHELLS) assert.match(completionScript(shell), /__complete/);
    assert.throws(() => parseCli(['completion', 'tcsh'], '/w'), /completion needs the shell: ralph completion bash\|zsh\|fish/);
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    for (const title of ['One', 'Two'])
      assert.equal((await runCliInProcess(['task', 'add', title, '--prompt', 'p', '--promise', 'q'], ws.dir)).code, 0);
    assert.ok((await completions(['st'], ws.dir)).includes('status'));
    assert.ok((await completions(['task', ''], ws.dir)).includes('retry'));
    assert.deepEqual((await completions(['task', 'retry', ''], ws.dir)).slice(0, 2), ['T-001', 'T-002']);
    assert.deepEqual(await completions(['run', '--task', ''], ws.dir), ['T-001', 'T-002']);
    const runOptions = await completions(['run', ''], ws.dir);
    for (const option of ['--task', '--json', '--unattended', '--workspace']) assert.ok(runOptions.includes(option), option);
    assert.ok(!runOptions.includes('--hard'), "the options of run's usage, not the words of its descriptions");
    assert.deepEqual(await completions(['run', '--agent', ''], ws.dir), [...AGENT_KINDS], "an option's choices");
    assert.deepEqual(await completions(['task', 'edit', 'T-001', '--review', ''], ws.dir), ['manual', 'auto']);
    assert.deepEqual(parseCli(['__complete', 'run', '--workspace', '/x', ''], '/w'), {
      kind: 'complete',
      workspace: '/x',
      words: ['run', '--workspace', '/x', ''],
    });
  });

  it('the bash completion script loads (bash -c "source <(ralph completion bash)") and completes a verb and a task id', async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    assert.equal((await runCliInProcess(['task', 'add', 'One', '--prompt', 'p', '--promise', 'q'], ws.dir)).code, 0);
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
