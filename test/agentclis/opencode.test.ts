import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OPENCODE_CONFIG_ENV, opencodeAdapter, opencodeConfig } from '../../src/core/agentCli/adapters/opencode';
import type { AgentCliEvent, SessionInput } from '../../src/core/agentCli/types';
import { startScriptedServer } from '../fixtures/scriptedServer';
import { agentCliOrSkip } from '../unit/helpers/agentClis';
import { OPENCODE_MODEL, opencodeEnv } from '../unit/helpers/agentCliRun';
import { readSignalFile, SIGNAL_FILE_ENV } from '../../src/core/agentCli/signalFile';
import { CLI } from '../unit/helpers/cliHarness';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const SAMPLES = path.join(REPO_ROOT, 'test/fixtures/agentCli/opencode');

/** All events of a captured `opencode run --format json` output (1.18.33), read line by line. */
function parseSample(name: string): AgentCliEvent[] {
  const parser = opencodeAdapter.createParser();
  const lines = readFileSync(path.join(SAMPLES, `${name}.jsonl`), 'utf8').split('\n');
  return [...lines.flatMap((line) => parser.line(line)), ...parser.end()];
}

const ofKind = <K extends AgentCliEvent['kind']>(events: AgentCliEvent[], kind: K) =>
  events.filter((e): e is Extract<AgentCliEvent, { kind: K }> => e.kind === kind);

function input(overrides: Partial<SessionInput> = {}): SessionInput {
  return {
    cwd: '/work/task',
    prompt: 'Do the task.',
    extraArgs: [],
    mcp: { name: 'ralph', command: '/usr/bin/node', args: ['/opt/ralph/cli.js', 'mcp'], env: { RALPH_SIGNAL_FILE: '/s/signal.json' } },
    sessionDir: '/work/.session',
    writableRoots: ['/work/task'],
    ...overrides,
  };
}

describe('the OpenCode adapter: launch', () => {
  it('starts `opencode run --format json` headless in the task folder, a named session, the prompt on stdin', () => {
    const launch = opencodeAdapter.launch(input({ model: 'anthropic/claude-sonnet-4-5', extraArgs: ['--pure'] }));
    assert.ok(!(launch instanceof Promise));
    const { args, env, stdin } = launch;
    assert.deepEqual(args.slice(0, 3), ['run', '--format', 'json']);
    assert.ok(args.includes('--title'), 'a title: no extra model request to name the session');
    assert.deepEqual(args.slice(args.indexOf('--dir'), args.indexOf('--dir') + 2), ['--dir', '/work/task']);
    assert.deepEqual(args.slice(args.indexOf('--model'), args.indexOf('--model') + 2), ['--model', 'anthropic/claude-sonnet-4-5']);
    assert.ok(!args.some((a) => ['-c', '--continue', '-s', '--session', '--fork', '--auto'].includes(a)), 'never resumed, never --auto');
    assert.equal(args.at(-1), '--pure', 'extra arguments last');
    assert.equal(stdin, 'Do the task.');
    assert.equal(env.PWD, '/work/task', 'OpenCode takes its folder from PWD');
    assert.equal(env.OPENCODE_DISABLE_AUTOUPDATE, '1');
    assert.deepEqual(Object.keys(env).sort(), [OPENCODE_CONFIG_ENV, 'OPENCODE_DISABLE_AUTOUPDATE', 'PWD'].sort());
  });

  it('its inline config: the signal server as a local MCP server, the folder rules, no snapshots, nothing of the person’s rules replaced', () => {
    const config = opencodeConfig(input({ writableRoots: ['/work/task', '/work/shared/'] }));
    assert.deepEqual(config, {
      permission: { external_directory: { '*': 'deny', '/work/shared/**': 'allow' }, doom_loop: 'deny' },
      mcp: {
        ralph: {
          type: 'local',
          command: ['/usr/bin/node', '/opt/ralph/cli.js', 'mcp'],
          environment: { RALPH_SIGNAL_FILE: '/s/signal.json' },
          enabled: true,
        },
      },
      snapshot: false,
    });
    const { env } = opencodeAdapter.launch(input()) as { env: Record<string, string> };
    assert.deepEqual(JSON.parse(env[OPENCODE_CONFIG_ENV]), opencodeConfig(input()));
  });

  it('names its package, command and label', () => {
    assert.equal(opencodeAdapter.kind, 'opencode');
    assert.equal(opencodeAdapter.label, 'OpenCode');
    assert.equal(opencodeAdapter.defaultCommand, 'opencode');
    assert.equal(opencodeAdapter.npmPackage, 'opencode-ai');
  });
});

describe('the OpenCode adapter: reading real `run --format json` output (1.18.33)', () => {
  it('a finished session: its id, a shell command and its result, usage per step, the last text as the result', () => {
    const events = parseSample('bash-complete');
    assert.deepEqual(events[0], { kind: 'session', id: 'ses_dbca33720ffeRt2ryagMAa33kR' });
    assert.deepEqual(ofKind(events, 'tool_call'), [
      {
        kind: 'tool_call',
        id: 'call_3_0',
        name: 'bash',
        input: { command: 'echo hi > shell.txt && cat shell.txt', description: 'write' },
      },
    ]);
    assert.deepEqual(ofKind(events, 'tool_result'), [{ kind: 'tool_result', id: 'call_3_0', ok: true, output: 'hi\n' }]);
    assert.deepEqual(ofKind(events, 'usage'), [
      { kind: 'usage', inputTokens: 2443, outputTokens: 19, cachedTokens: 0 },
      { kind: 'usage', inputTokens: 2509, outputTokens: 8, cachedTokens: 0 },
    ]);
    assert.ok(!ofKind(events, 'usage').some((u) => 'costUsd' in u), 'a cost of 0 (an unpriced model) is no cost figure');
    assert.deepEqual(ofKind(events, 'text'), [{ kind: 'text', text: 'Done. <ralph>COMPLETE</ralph>' }]);
    assert.deepEqual(events.at(-1), { kind: 'result', text: 'Done. <ralph>COMPLETE</ralph>', isError: false });
    assert.equal(ofKind(events, 'session').length, 1);
  });

  it('an MCP tool is named `<server>_<tool>`; tools refused by the folder rules are failed results, the session goes on', () => {
    const events = parseSample('mcp-and-denied');
    const calls = ofKind(events, 'tool_call');
    assert.deepEqual(
      calls.map((c) => c.name),
      ['ralph_probe', 'write', 'read', 'bash'],
    );
    const results = ofKind(events, 'tool_result');
    assert.deepEqual(results[0], { kind: 'tool_result', id: 'call_5_0', ok: true, output: 'probe ok: hello' });
    assert.deepEqual(
      results.slice(1).map((r) => r.ok),
      [false, false, false],
    );
    assert.match(results[1].output, /^The user has specified a rule which prevents you from using this specific tool call/);
    assert.equal(ofKind(events, 'error').length, 0);
    assert.equal(ofKind(events, 'result')[0].isError, false);
  });

  it('a call that would ask is refused at once and ends the session (no hang)', () => {
    const events = parseSample('ask-rejected');
    assert.deepEqual(ofKind(events, 'tool_result'), [
      { kind: 'tool_result', id: 'call_19_0', ok: false, output: 'The user rejected permission to use this specific tool call.' },
    ]);
    assert.deepEqual(events.at(-1), { kind: 'result', text: '', isError: false });
  });

  for (const [sample, status] of [
    ['api-error-500', 500],
    ['auth-error-401', 401],
  ] as const) {
    it(`an API error ${status}: one error carrying the provider's message and status, a failed result`, () => {
      const events = parseSample(sample);
      assert.equal(events[0].kind, 'session');
      const message = `scripted ${status}`;
      assert.deepEqual(ofKind(events, 'error'), [{ kind: 'error', message }]);
      assert.deepEqual(events.at(-1), { kind: 'result', text: '', isError: true, message });
    });
  }

  it('usage: cached input and reasoning counted in; a priced step carries its cost', () => {
    const parser = opencodeAdapter.createParser();
    const line = {
      type: 'step_finish',
      part: { tokens: { input: 10, output: 5, reasoning: 3, cache: { read: 90, write: 2 } }, cost: 0.25 },
    };
    assert.deepEqual(parser.line(JSON.stringify(line)), [
      { kind: 'usage', inputTokens: 102, outputTokens: 8, cachedTokens: 90, costUsd: 0.25 },
    ]);
    const error = { type: 'error', error: { name: 'APIError', data: { message: 'Unauthorized', statusCode: 401 } } };
    assert.deepEqual(parser.line(JSON.stringify(error)), [{ kind: 'error', message: 'Unauthorized (HTTP 401)' }]);
  });

  it('malformed and unknown lines are skipped, never thrown; nothing read, nothing reported', () => {
    const parser = opencodeAdapter.createParser();
    const junk = [
      '',
      'not json',
      '{broken',
      '[1,2]',
      'null',
      '{"type":"tool_use"}',
      '{"type":"tool_use","part":null}',
      '{"type":"mystery"}',
    ];
    junk.push('{"type":"step_finish","part":{"tokens":"lots"}}', '{"type":"error"}', '{"type":"text","part":{"text":7}}');
    for (const line of junk) assert.doesNotThrow(() => parser.line(line));
    assert.deepEqual(opencodeAdapter.createParser().end(), []);
  });
});

describe('the OpenCode adapter: a real opencode session against the scripted server', function () {
  this.timeout(90_000);
  let bin: string;
  let home: string;
  let repo: string;

  beforeEach(function () {
    bin = agentCliOrSkip('opencode', this).bin;
    home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'ralph-opencode-')));
    repo = path.join(home, 'repo');
    mkdirSync(repo);
    writeFileSync(path.join(repo, 'README.md'), 'first line\n');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
    git('init', '-q');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qam', 'init', '--allow-empty');
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('runs a command and the MCP tool in the task folder, is refused outside it, every request a turn of the script', async () => {
    const signalFile = path.join(home, 'signals.ndjson');
    const outside = path.join(home, 'outside.txt');
    const server = await startScriptedServer({
      steps: [
        { toolCalls: [{ name: 'bash', arguments: { command: 'echo from-shell > shell.txt', description: 'write' } }] },
        { toolCalls: [{ name: 'ralph_report_progress', arguments: { percent: 50, note: 'hello' } }] },
        { toolCalls: [{ name: 'write', arguments: { filePath: outside, content: 'x' } }] },
        { content: 'All done. <ralph>COMPLETE</ralph>' },
      ],
    });
    const made = await opencodeEnv(server.url);
    try {
      // Ralph's own signal server, as a run gives it
      const mcp = { name: 'ralph', command: process.execPath, args: [CLI, 'mcp'], env: { [SIGNAL_FILE_ENV]: signalFile } };
      const launch = await opencodeAdapter.launch(input({ cwd: repo, writableRoots: [repo], model: OPENCODE_MODEL, mcp }));
      // from another folder, its PWD inherited: the adapter's PWD and --dir must win
      const env = { ...process.env, ...made.env, PWD: REPO_ROOT, ...launch.env };
      const child = spawn(bin, launch.args, { cwd: repo, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      child.stdin.end(launch.stdin);
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 60_000);
      const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
      clearTimeout(timer);
      const parser = opencodeAdapter.createParser();
      const events = [...stdout.split('\n').flatMap((l) => parser.line(l)), ...parser.end()];
      assert.equal(code, 0, stdout);
      assert.equal(readFileSync(path.join(repo, 'shell.txt'), 'utf8'), 'from-shell\n');
      assert.deepEqual(await readSignalFile(signalFile), [{ kind: 'PROGRESS', percent: 50, note: 'hello' }]);
      assert.throws(() => readFileSync(outside), 'nothing written outside the task folder');
      assert.deepEqual(
        ofKind(events, 'tool_result').map((r) => [r.id ? 'call' : '', r.ok]),
        [
          ['call', true],
          ['call', true],
          ['call', false],
        ],
      );
      assert.deepEqual(events.at(-1), { kind: 'result', text: 'All done. <ralph>COMPLETE</ralph>', isError: false });
      assert.equal(server.requests.length, 4, 'no title request, no other request');
      assert.equal(server.requests[0].headers.authorization, 'Bearer sk-test-opencode');
      const first = server.requests[0].body?.messages?.find((m) => m.role === 'user');
      assert.equal(first?.content, 'Do the task.', 'the prompt came through stdin');
      assert.ok(JSON.stringify(server.requests[0].body?.tools).includes('"ralph_report_progress"'));
    } finally {
      await server.close();
      rmSync(made.home, { recursive: true, force: true });
    }
  });
});
