import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { CLAUDE_TOOL_OUTPUT_LIMIT, claudeCodeAdapter } from '../../src/core/agentCli/adapters/claudeCode';
import type { AgentCliEvent, SessionInput } from '../../src/core/agentCli/types';
import { type AnthropicStep, startAnthropicServer } from '../fixtures/anthropicServer';
import { makeTempWorkspace, type TempWorkspace } from '../unit/helpers/tempWorkspace';
import { readSignalFile, SIGNAL_FILE_ENV } from '../../src/core/agentCli/signalFile';
import { CLI } from '../unit/helpers/cliHarness';

/** The pinned version the test tier installs (`npm install --prefix <dir>/claude-code-<version>`). */
const CLAUDE_CODE_VERSION = '2.1.332';

const repoRoot = __dirname.split(path.sep).includes('out') ? path.resolve(__dirname, '../../..') : path.resolve(__dirname, '../..');

function sample(name: string): string[] {
  return readFileSync(path.join(repoRoot, 'test', 'fixtures', 'agentCli', 'claude-code', name), 'utf8').split('\n');
}

function parse(lines: string[]): AgentCliEvent[] {
  const parser = claudeCodeAdapter.createParser();
  return [...lines.flatMap((line) => parser.line(line)), ...parser.end()];
}

function ofKind<K extends AgentCliEvent['kind']>(events: AgentCliEvent[], kind: K): Extract<AgentCliEvent, { kind: K }>[] {
  return events.filter((e): e is Extract<AgentCliEvent, { kind: K }> => e.kind === kind);
}

function sumUsage(events: AgentCliEvent[]) {
  const usage = ofKind(events, 'usage');
  return {
    input: usage.reduce((n, u) => n + u.inputTokens, 0),
    output: usage.reduce((n, u) => n + u.outputTokens, 0),
    cached: usage.reduce((n, u) => n + (u.cachedTokens ?? 0), 0),
  };
}

function sessionInput(dir: string, overrides: Partial<SessionInput> = {}): SessionInput {
  return {
    cwd: path.join(dir, 'repo'),
    prompt: 'Do the task.',
    extraArgs: [],
    mcp: { name: 'ralph', command: '/usr/bin/node', args: ['ralph.js', 'mcp'], env: { RALPH_TASK: 't1' } },
    sessionDir: path.join(dir, 'session'),
    writableRoots: [path.join(dir, 'repo')],
    ...overrides,
  };
}

describe('claudeCodeAdapter.launch', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-claude-launch-'));
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('starts a headless stream-json session with the prompt on stdin, acceptEdits, Bash and the MCP tools allowed', async () => {
    const launch = await claudeCodeAdapter.launch(sessionInput(dir, { prompt: 'A long prompt\n'.repeat(1000) }));
    const mcpFile = path.join(dir, 'session', 'mcp.json');
    assert.deepEqual(launch.args, [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'acceptEdits',
      '--allowedTools=Bash,mcp__ralph__*',
      `--mcp-config=${mcpFile}`,
      '--strict-mcp-config',
    ]);
    assert.equal(launch.stdin, 'A long prompt\n'.repeat(1000));
    assert.deepEqual(launch.env, { DISABLE_AUTOUPDATER: '1' });
    assert.ok(!launch.args.some((a) => /^(--resume|--continue|-c|-r|--add-dir)$/.test(a)));
  });

  it('writes the MCP server into the session folder as Claude Code reads it', async () => {
    await claudeCodeAdapter.launch(sessionInput(dir));
    const config = JSON.parse(await fs.readFile(path.join(dir, 'session', 'mcp.json'), 'utf8'));
    assert.deepEqual(config, {
      mcpServers: { ralph: { type: 'stdio', command: '/usr/bin/node', args: ['ralph.js', 'mcp'], env: { RALPH_TASK: 't1' } } },
    });
  });

  it('adds the model, then the configured arguments last', async () => {
    const launch = await claudeCodeAdapter.launch(sessionInput(dir, { model: 'sonnet', extraArgs: ['--effort', 'low'] }));
    assert.deepEqual(launch.args.slice(-4), ['--model', 'sonnet', '--effort', 'low']);
  });

  it('names the CLI, its package and its key variables', () => {
    assert.equal(claudeCodeAdapter.kind, 'claude-code');
    assert.equal(claudeCodeAdapter.label, 'Claude Code');
    assert.equal(claudeCodeAdapter.defaultCommand, 'claude');
    assert.equal(claudeCodeAdapter.npmPackage, '@anthropic-ai/claude-code');
    assert.ok(claudeCodeAdapter.keyVariables.includes('ANTHROPIC_API_KEY'));
  });
});

describe('Claude Code stream-json parser (recorded from the real CLI)', () => {
  it('reads a whole session: its id, texts, tool calls and results, usage counted once per message, cost, result', () => {
    const events = parse(sample('success.jsonl'));
    assert.deepEqual(events[0], { kind: 'session', id: '20e90fc2-d93e-4540-8f53-1ddcde0b2b28', model: 'claude-opus-5-5' });
    assert.deepEqual(
      ofKind(events, 'text').map((e) => e.text),
      ['I will look at the repository first.', 'Everything is done. <ralph>COMPLETE</ralph>'],
    );
    const calls = ofKind(events, 'tool_call');
    assert.deepEqual(
      calls.map((c) => c.name),
      ['Bash', 'Write', 'Edit', 'Bash', 'mcp__ralph__ralph_complete'],
    );
    assert.deepEqual(calls[4].input, { summary: 'wrote result.txt and edited notes.txt' });
    const results = ofKind(events, 'tool_result');
    assert.deepEqual(
      results.map((r) => [r.id, r.ok]),
      calls.map((c) => [c.id, c.name !== 'Bash' || !String((c.input as { command: string }).command).includes('does-not-exist')]),
    );
    assert.equal(results[0].output, 'bash-ran-42\nnotes.txt');
    assert.match(results[3].output, /No such file or directory/);
    assert.equal(results[4].output, 'Ralph noted: task complete.');
    // The script's usage: (input + cache read + cache write) and output of each of the five API messages.
    assert.deepEqual(sumUsage(events), { input: 4700 + 4800 + 4920 + 5100 + 5290, output: 40 + 80 + 25 + 30 + 15, cached: 22500 });
    assert.deepEqual(ofKind(events, 'total_cost'), [{ kind: 'total_cost', costUsd: 0.01804 }]);
    assert.deepEqual(events.at(-1), { kind: 'result', text: 'Everything is done. <ralph>COMPLETE</ralph>', isError: false });
  });

  it('reads an API failure (500) as an error and a failed result', () => {
    const events = parse(sample('api-error-500.jsonl'));
    assert.equal(ofKind(events, 'text').length, 0);
    assert.match(ofKind(events, 'error')[0].message, /API Error: 500 scripted 500/);
    const result = ofKind(events, 'result')[0];
    assert.equal(result.isError, true);
    assert.match(result.message ?? '', /^API error 500: /);
  });

  it('reads an authentication failure (401) and a missing login the same way', () => {
    const auth = ofKind(parse(sample('auth-error-401.jsonl')), 'result')[0];
    assert.equal(auth.isError, true);
    assert.match(auth.message ?? '', /^API error 401: Failed to authenticate/);
    // By default the CLI retries a 401 ten times (~3 minutes), announcing each as a `system/api_retry` line.
    // Each becomes a `retry` with its status: the session runner ends the session at the first 401.
    const retried = parse(sample('auth-error-401-retried.jsonl'));
    assert.deepEqual(
      retried.map((e) => e.kind),
      ['session', ...Array<string>(10).fill('retry'), 'error', 'total_cost', 'result'],
    );
    const first = ofKind(retried, 'retry')[0];
    assert.equal(first.status, 401);
    assert.equal(first.attempt, 1);
    assert.match(first.message, /authentication_failed \(HTTP 401\)/);
    const login = ofKind(parse(sample('not-logged-in.jsonl')), 'result')[0];
    assert.equal(login.isError, true);
    assert.match(login.message ?? '', /Not logged in/);
  });

  it('reads a tool call a PreToolUse hook blocked as a failed tool result', () => {
    const blocked = ofKind(parse(sample('hook-blocked.jsonl')), 'tool_result')[1];
    assert.equal(blocked.ok, false);
    assert.match(blocked.output, /PreToolUse:Write hook error: .*Ralph blocks writes to out2\.txt/);
  });

  it('ignores blank and malformed lines, reports error-like text, never throws', () => {
    const parser = claudeCodeAdapter.createParser();
    for (const line of [
      '',
      '   ',
      'not json',
      '{"type":',
      '[1,2]',
      'null',
      '{"type":"assistant","message":5}',
      '{"type":"user","message":{"content":"x"}}',
    ]) {
      assert.deepEqual(parser.line(line), [], line);
    }
    assert.deepEqual(parser.line('Error: something broke'), [{ kind: 'error', message: 'Error: something broke' }]);
    assert.deepEqual(parser.end(), [{ kind: 'error', message: 'Claude Code stopped without reporting a result' }]);
  });

  it('counts a message id once across its lines, adds later output growth, and cuts long tool output', () => {
    const assistant = (content: object[], usage: object) => JSON.stringify({ type: 'assistant', message: { id: 'msg_1', content, usage } });
    const events = parse([
      assistant([{ type: 'text', text: 'a' }], { input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 5 }),
      assistant([{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }], {
        input_tokens: 10,
        output_tokens: 7,
        cache_read_input_tokens: 5,
      }),
      JSON.stringify({
        type: 'user',
        message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'x'.repeat(10_000) }] }] },
      }),
      JSON.stringify({
        type: 'result',
        subtype: 'error_max_turns',
        is_error: true,
        usage: { input_tokens: 10, output_tokens: 9, cache_read_input_tokens: 5 },
      }),
    ]);
    assert.deepEqual(ofKind(events, 'usage'), [
      { kind: 'usage', inputTokens: 15, outputTokens: 1, cachedTokens: 5 },
      { kind: 'usage', inputTokens: 0, outputTokens: 6 },
      { kind: 'usage', inputTokens: 0, outputTokens: 2 },
    ]);
    const output = ofKind(events, 'tool_result')[0].output;
    assert.ok(output.length < CLAUDE_TOOL_OUTPUT_LIMIT + 100 && output.endsWith('[6000 more characters]'));
    assert.deepEqual(events.at(-1), { kind: 'result', text: '', isError: true, message: 'error_max_turns' });
  });
});

/** The installed CLI of the test tier, or why there is none. */
function findClaude(): { command?: string; reason?: string } {
  const root = process.env.RALPH_AGENT_CLIS_DIR || path.join(os.homedir(), '.cache', 'ralph-loop', 'agent-clis');
  const command = path.join(root, `claude-code-${CLAUDE_CODE_VERSION}`, 'node_modules', '.bin', 'claude');
  if (existsSync(command)) return { command };
  return {
    reason:
      `Claude Code ${CLAUDE_CODE_VERSION} is not installed at ${command} ` +
      `(npm install --prefix ${path.dirname(path.dirname(path.dirname(command)))} @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}; RALPH_AGENT_CLIS_DIR moves the folder)`,
  };
}

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  events: AgentCliEvent[];
  startMs: number;
  endMs: number;
}

/** One real session against the scripted server: the adapter's launch, a private home, no network. */
async function runClaude(command: string, ws: TempWorkspace, baseUrl: string, home: string, signalFile: string): Promise<CliRun> {
  const input = sessionInput(home, {
    cwd: ws.dir,
    writableRoots: [ws.dir],
    prompt: 'Write result.txt, edit notes.txt, then call the ralph_complete tool.',
    mcp: {
      name: 'ralph',
      command: process.execPath,
      args: [CLI, 'mcp'],
      env: { [SIGNAL_FILE_ENV]: signalFile },
    },
  });
  const launch = await claudeCodeAdapter.launch(input);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
    ...launch.env,
  };
  const startMs = Date.now();
  const child = spawn(command, launch.args, { cwd: ws.dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(launch.stdin);
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  return { code, stdout, stderr, events: parse(stdout.split('\n')), startMs, endMs: Date.now() };
}

describe('Claude Code end to end (the real CLI against a scripted Anthropic server)', function () {
  this.timeout(90_000);
  const claude = findClaude();
  let ws: TempWorkspace;
  let home: string;

  before(function () {
    if (!claude.command) {
      console.log(`      skipped: ${claude.reason}`);
      this.skip();
    }
  });
  beforeEach(async () => {
    ws = await makeTempWorkspace({ git: true, commit: true, files: { 'notes.txt': 'hello\n' }, prefix: 'ralph-claude-e2e-' });
    home = await ws.outsideDir();
  });
  afterEach(() => ws?.cleanup());

  it('runs Bash, writes and edits files, calls the MCP tool and ends with the completion text', async () => {
    const steps: AnthropicStep[] = [
      { text: 'Looking first.', toolUses: [{ name: 'Bash', input: { command: 'echo bash-ran-$((6*7)) && ls', description: 'Look' } }] },
      {
        match: { lastToolResultContains: 'bash-ran-42' },
        toolUses: [
          { name: 'Write', input: { file_path: ws.path('result.txt'), content: 'written by the agent\n' } },
          { name: 'Edit', input: { file_path: ws.path('notes.txt'), old_string: 'hello', new_string: 'hello, edited' } },
        ],
        usage: { input_tokens: 300, output_tokens: 80, cache_read_input_tokens: 4000 },
      },
      { toolUses: [{ name: 'mcp__ralph__ralph_complete', input: { summary: 'done', promiseEvidence: 'result.txt written' } }] },
      { match: { lastToolResultContains: 'Completion recorded' }, text: 'All done. <ralph>COMPLETE</ralph>' },
    ];
    const server = await startAnthropicServer({ steps });
    const signals = path.join(home, 'signals.ndjson');
    try {
      const run = await runClaude(claude.command!, ws, server.url, home, signals);
      const firstRequest = server.requests[0]?.time ?? NaN;
      console.log(
        `      claude: first request after ${(firstRequest - run.startMs) / 1000} s, exit after ${(run.endMs - run.startMs) / 1000} s`,
      );
      assert.equal(run.code, 0, `exit ${run.code}; stderr: ${run.stderr}`);
      assert.equal(server.pending, 0);
      assert.ok(server.requests.every((r) => r.outcome === 'reply' || r.outcome === 'side reply' || r.outcome === 'hello'));
      assert.equal(await ws.read('result.txt'), 'written by the agent\n');
      assert.equal(await ws.read('notes.txt'), 'hello, edited\n');
      // `ralph mcp` recorded the signal the session gave through its tool
      assert.deepEqual(await readSignalFile(signals), [{ kind: 'COMPLETE', summary: 'done', promiseEvidence: 'result.txt written' }]);

      const kinds = new Set(run.events.map((e) => e.kind));
      for (const kind of ['session', 'text', 'tool_call', 'tool_result', 'usage', 'total_cost', 'result'])
        assert.ok(kinds.has(kind as never), kind);
      assert.ok(!kinds.has('error'), JSON.stringify(ofKind(run.events, 'error')));
      assert.deepEqual(
        ofKind(run.events, 'tool_call').map((c) => c.name),
        ['Bash', 'Write', 'Edit', 'mcp__ralph__ralph_complete'],
      );
      assert.ok(ofKind(run.events, 'tool_result').every((r) => r.ok));
      assert.deepEqual(run.events.at(-1), { kind: 'result', text: 'All done. <ralph>COMPLETE</ralph>', isError: false });
      // The prompt arrived through stdin as the user's message.
      assert.match(JSON.stringify(server.mainRequests[0].body?.messages), /Write result\.txt, edit notes\.txt/);
    } finally {
      await server.close();
    }
  });

  for (const status of [500, 401]) {
    it(`exits 1 with a failed result when the API answers ${status}`, async () => {
      const server = await startAnthropicServer({ steps: [{ fault: 'status', status }] });
      try {
        const run = await runClaude(claude.command!, ws, server.url, home, path.join(home, 'calls.jsonl'));
        assert.equal(run.code, 1, run.stderr);
        assert.equal(run.stderr, '');
        const result = ofKind(run.events, 'result')[0];
        assert.equal(result.isError, true);
        assert.match(result.message ?? '', new RegExp(`^API error ${status}: `));
        assert.match(ofKind(run.events, 'error')[0].message, new RegExp(`API Error: ${status}`));
      } finally {
        await server.close();
      }
    });
  }
});
