import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { codexAdapter, mcpOverrides, tomlString } from '../../src/core/agentCli/adapters/codex';
import type { AgentCliEvent, SessionInput } from '../../src/core/agentCli/types';
import { startResponsesServer } from '../fixtures/responsesServer';
import { readSignalFile, SIGNAL_FILE_ENV } from '../../src/core/agentCli/signalFile';
import { CLI } from '../unit/helpers/cliHarness';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const SAMPLES = path.join(REPO_ROOT, 'test/fixtures/agentCli/codex');
const CODEX_VERSION = '0.171.0';

/** All events of a captured `codex exec --json` output, read line by line. */
function parseSample(name: string): AgentCliEvent[] {
  const parser = codexAdapter.createParser();
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

describe('the Codex CLI adapter: launch', () => {
  it('starts `codex exec --json` headless in the workspace-write sandbox, the prompt on stdin', () => {
    const launch = codexAdapter.launch(input({ model: 'gpt-5.5', extraArgs: ['--ephemeral'] }));
    assert.ok(!(launch instanceof Promise));
    const { args, env, stdin } = launch;
    assert.deepEqual(args.slice(0, 3), ['exec', '--json', '--skip-git-repo-check']);
    assert.deepEqual(args.slice(args.indexOf('--sandbox'), args.indexOf('--sandbox') + 2), ['--sandbox', 'workspace-write']);
    assert.deepEqual(args.slice(args.indexOf('-C'), args.indexOf('-C') + 2), ['-C', '/work/task']);
    assert.ok(args.includes('approval_policy="never"'));
    assert.deepEqual(args.slice(args.indexOf('--model'), args.indexOf('--model') + 2), ['--model', 'gpt-5.5']);
    assert.ok(!args.includes('resume'));
    assert.deepEqual(args.slice(-2), ['--ephemeral', '-'], 'extra arguments after the own ones, the stdin marker last');
    assert.equal(stdin, 'Do the task.');
    assert.deepEqual(env, {}, 'no variable of Ralph’s reaches the CLI');
  });

  it('adds the other writable roots with --add-dir, and no --model when none is given', () => {
    const { args } = codexAdapter.launch(input({ writableRoots: ['/work/task', '/work/shared'] })) as { args: string[] };
    assert.deepEqual(args.slice(args.indexOf('--add-dir'), args.indexOf('--add-dir') + 2), ['--add-dir', '/work/shared']);
    assert.equal(args.filter((a) => a === '--add-dir').length, 1);
    assert.ok(!args.includes('--model'));
  });

  it('declares the signal server with -c overrides in TOML, its tools approved, the session waiting for it', () => {
    const overrides = mcpOverrides({ name: 'ralph', command: 'C:\\node.exe', args: ['a "b"', 'ü'], env: { K: 'v\n', 'A.B': 'x' } });
    assert.deepEqual(overrides, [
      '-c',
      'mcp_servers.ralph.command="C:\\\\node.exe"',
      '-c',
      'mcp_servers.ralph.args=["a \\"b\\"","ü"]',
      '-c',
      'mcp_servers.ralph.env={K="v\\n","A.B"="x"}',
      '-c',
      'mcp_servers.ralph.default_tools_approval_mode="approve"',
      '-c',
      'mcp_servers.ralph.required=true',
    ]);
    assert.equal(mcpOverrides({ name: 'my.server', command: 'x', args: [], env: {} })[1], 'mcp_servers.my_server.command="x"');
    assert.equal(tomlString('\ud800x'), '"\ufffdx"', 'a lone surrogate cannot be written in TOML');
  });

  it('names its package, command and key variables', () => {
    assert.equal(codexAdapter.kind, 'codex');
    assert.equal(codexAdapter.label, 'Codex');
    assert.equal(codexAdapter.defaultCommand, 'codex');
    assert.equal(codexAdapter.npmPackage, '@openai/codex');
    assert.deepEqual([...codexAdapter.keyVariables], ['CODEX_API_KEY', 'OPENAI_API_KEY']);
  });
});

describe('the Codex CLI adapter: reading real `exec --json` output (0.171.0)', () => {
  it('a finished session: messages, shell commands, patches, usage and the final message', () => {
    const events = parseSample('shell-patch-complete');
    assert.deepEqual(events[0], { kind: 'session', id: '01a24334-0aef-7c30-b16d-b778544e1bd3' });
    assert.deepEqual(
      ofKind(events, 'text').map((e) => e.text),
      ['Looking around first.', 'Done: notes.txt holds the edited line. <ralph>COMPLETE</ralph>'],
    );
    const calls = ofKind(events, 'tool_call');
    assert.deepEqual(
      calls.map((c) => c.name),
      ['shell', 'apply_patch', 'apply_patch', 'shell'],
      'one call per item, though each item is both started and completed',
    );
    assert.deepEqual(calls[0].input, { command: "/bin/bash -lc 'echo hello-from-shell && ls'" });
    assert.deepEqual(calls[1].input, { changes: [{ path: '/work/repo/notes.txt', kind: 'add' }] });
    const results = ofKind(events, 'tool_result');
    assert.deepEqual(
      results.map((r) => [r.id, r.ok]),
      [
        ['item_1', true],
        ['item_2', true],
        ['item_3', true],
        ['item_4', false],
      ],
    );
    assert.match(results[0].output, /hello-from-shell\n\n?\(exit code 0\)$/);
    assert.equal(results[2].output, 'update /work/repo/notes.txt');
    assert.equal(results[3].output, 'edited line\n\n(exit code 3)');
    assert.deepEqual(ofKind(events, 'usage'), [{ kind: 'usage', inputTokens: 29941, outputTokens: 257, cachedTokens: 512 }]);
    assert.deepEqual(events.at(-1), {
      kind: 'result',
      text: 'Done: notes.txt holds the edited line. <ralph>COMPLETE</ralph>',
      isError: false,
    });
    assert.equal(ofKind(events, 'error').length, 0);
    assert.ok(!events.some((e) => e.kind === 'total_cost' || (e.kind === 'usage' && e.costUsd !== undefined)), 'Codex reports no cost');
  });

  it('an MCP tool call is named after its server and tool; the model-metadata warning item is no error', () => {
    const events = parseSample('mcp-call');
    assert.deepEqual(ofKind(events, 'tool_call'), [
      { kind: 'tool_call', id: 'item_1', name: 'mcp__ralph__probe', input: { note: 'hello' } },
    ]);
    assert.deepEqual(ofKind(events, 'tool_result'), [{ kind: 'tool_result', id: 'item_1', ok: true, output: 'probe ok: hello' }]);
    assert.equal(ofKind(events, 'error').length, 0);
    assert.equal(ofKind(events, 'result')[0].isError, false);
  });

  it('an MCP call refused for want of approval is a failed tool result', () => {
    const results = ofKind(parseSample('mcp-approval-refused'), 'tool_result');
    assert.deepEqual(results, [
      { kind: 'tool_result', id: 'item_1', ok: false, output: 'MCP tool call requires approval, but approval policy is never' },
    ]);
  });

  it('an API error: one error, then a failed result carrying its message', () => {
    const events = parseSample('api-error-500');
    const message = 'We’re currently experiencing high demand, which may cause temporary errors.';
    assert.deepEqual(ofKind(events, 'error'), [{ kind: 'error', message }]);
    assert.deepEqual(events.at(-1), { kind: 'result', text: '', isError: true, message });
  });

  it('"Reconnecting..." retries are not errors; the final failure is', () => {
    const events = parseSample('auth-error-401-retried');
    const errors = ofKind(events, 'error');
    assert.equal(errors.length, 1);
    assert.match(errors[0].message, /^unexpected status 401 Unauthorized/);
    const result = ofKind(events, 'result');
    assert.equal(result.length, 1);
    assert.equal(result[0].isError, true);
  });

  it('malformed and unknown lines are skipped, never thrown; a stream cut before the turn ends is a failure', () => {
    const parser = codexAdapter.createParser();
    const junk = ['', 'not json', '{broken', '[1,2]', 'null', '{"type":"item.completed"}', '{"type":"item.completed","item":null}'];
    junk.push('{"type":"item.completed","item":{"type":"command_execution"}}', '{"type":"turn.completed","usage":"lots"}');
    junk.push('{"type":"mystery"}', '{"type":"error"}', '{"type":"turn.failed"}');
    const fresh = codexAdapter.createParser();
    for (const line of junk) assert.doesNotThrow(() => fresh.line(line));
    assert.deepEqual(parser.line('{"type":"thread.started","thread_id":"t-1"}'), [{ kind: 'session', id: 't-1' }]);
    parser.line('{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"half way"}}');
    assert.deepEqual(parser.end(), [{ kind: 'result', text: 'half way', isError: true, message: 'Codex stopped before its turn ended' }]);
    assert.deepEqual(codexAdapter.createParser().end(), [], 'nothing started, nothing to report');
  });
});

/** The pinned CLI in the agent CLI cache, if it was installed there. */
function cachedCodex(): string | undefined {
  const dir = process.env.RALPH_AGENT_CLIS_DIR ?? path.join(os.homedir(), '.cache/ralph-loop/agent-clis');
  const bin = path.join(dir, `codex-${CODEX_VERSION}`, 'node_modules/.bin/codex');
  return existsSync(bin) ? bin : undefined;
}

interface RunResult {
  code: number | null;
  events: AgentCliEvent[];
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs one real Codex session against the scripted server, offline: a private CODEX_HOME, a
 * TMPDIR beside it (Codex refuses to set up its sandbox helper when CODEX_HOME lies inside the
 * temporary folder), the scripted provider, no retries, no analytics and no plugin sync.
 */
async function runCodex(bin: string, home: string, sessionInput: SessionInput, url: string): Promise<RunResult> {
  const provider = `{name="Scripted",base_url="${url}",wire_api="responses",env_key="RALPH_TEST_KEY",request_max_retries=0,stream_max_retries=0}`;
  const launch = await codexAdapter.launch({
    ...sessionInput,
    extraArgs: [
      '-c',
      'model_provider="ralph_scripted"',
      '-c',
      `model_providers.ralph_scripted=${provider}`,
      '-c',
      'analytics.enabled=false',
      '--disable',
      'plugins',
    ],
  });
  const env = {
    ...process.env,
    ...launch.env,
    CODEX_HOME: path.join(home, 'codex-home'),
    TMPDIR: path.join(home, 'tmp'),
    RALPH_TEST_KEY: 'sk-test',
  };
  mkdirSync(env.CODEX_HOME, { recursive: true });
  mkdirSync(env.TMPDIR, { recursive: true });
  const started = Date.now();
  // Its own process group: on Node < 22 the npm `codex` script spawns the native binary as a child,
  // and a SIGKILL of the script alone would leave that child running.
  const child = spawn(bin, launch.args, { cwd: sessionInput.cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  child.stdin.end(launch.stdin);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  clearTimeout(timer);
  const parser = codexAdapter.createParser();
  const events = [...stdout.split('\n').flatMap((l) => parser.line(l)), ...parser.end()];
  return { code, events, stdout, stderr, ms: Date.now() - started };
}

describe(`the Codex CLI adapter: a real codex ${CODEX_VERSION} session against a scripted server`, function () {
  this.timeout(90_000);
  const bin = cachedCodex();
  let home: string;
  let repo: string;

  before(function () {
    if (!bin) {
      console.log(`    (skipped: no codex-${CODEX_VERSION} under RALPH_AGENT_CLIS_DIR or ~/.cache/ralph-loop/agent-clis)`);
      this.skip();
    }
  });

  beforeEach(() => {
    home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'ralph-codex-')));
    repo = path.join(home, 'repo');
    mkdirSync(repo);
    writeFileSync(path.join(repo, 'README.md'), 'first line\n');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
    git('init', '-q');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qam', 'init', '--allow-empty');
  });

  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('gpt-5.5 (known metadata): runs a command, patches a file with apply_patch, ends with COMPLETE, exit 0', async () => {
    const patch = '*** Begin Patch\n*** Update File: README.md\n@@\n-first line\n+patched line\n*** End Patch\n';
    const server = await startResponsesServer({
      steps: [
        {
          text: 'Looking first.',
          toolCalls: [{ name: 'exec_command', arguments: { cmd: 'echo from-shell > shell.txt && cat shell.txt' } }],
        },
        { match: { lastToolOutputContains: 'from-shell' }, toolCalls: [{ name: 'apply_patch', input: patch }] },
        { text: 'All done. <ralph>COMPLETE</ralph>', usage: { input_tokens: 100, output_tokens: 10 } },
      ],
    });
    try {
      const mcp = { name: 'ralph', command: process.execPath, args: [CLI, 'mcp'], env: {} };
      const run = await runCodex(bin!, home, input({ cwd: repo, writableRoots: [repo], model: 'gpt-5.5', mcp }), server.url);
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.equal(readFileSync(path.join(repo, 'README.md'), 'utf8'), 'patched line\n');
      assert.equal(readFileSync(path.join(repo, 'shell.txt'), 'utf8'), 'from-shell\n');
      assert.deepEqual(
        ofKind(run.events, 'tool_call').map((c) => c.name),
        ['shell', 'apply_patch'],
      );
      assert.deepEqual(
        ofKind(run.events, 'tool_result').map((r) => r.ok),
        [true, true],
      );
      assert.equal(run.events[0].kind, 'session');
      assert.deepEqual(run.events.at(-1), { kind: 'result', text: 'All done. <ralph>COMPLETE</ralph>', isError: false });
      const usage = ofKind(run.events, 'usage');
      assert.equal(usage.length, 1, 'one usage for the whole turn, summed over its requests');
      assert.ok(usage[0].inputTokens > 100);
      // Every request was a turn of the script: no side request reached the server.
      assert.deepEqual(
        server.requests.map((r) => `${r.method} ${r.path} ${r.kind} ${r.outcome}`),
        Array(3).fill('POST /v1/responses turn reply'),
      );
      const body = server.requests[0].body;
      assert.equal(body?.model, 'gpt-5.5');
      assert.ok(JSON.stringify(body?.input).includes('Do the task.'), 'the prompt came through stdin');
      assert.equal(server.requests[0].headers.authorization, 'Bearer sk-test');
    } finally {
      await server.close();
    }
  });

  it('an unknown model (fallback metadata): calls the MCP tool Codex started with the given env, exit 0', async () => {
    // A folder name with a space and quotes: the -c overrides must quote it right for ralph mcp to record there.
    const logDir = path.join(home, `it's "logs"`);
    mkdirSync(logDir);
    const signalFile = path.join(logDir, 'signals.ndjson');
    let tools = '';
    const server = await startResponsesServer({
      steps: [
        (request) => {
          tools = JSON.stringify(request.body?.tools ?? []);
          return { toolCalls: [{ name: 'report_progress', namespace: 'mcp__ralph', arguments: { percent: 50, note: 'hello' } }] };
        },
        { match: { lastToolOutputContains: 'Progress 50% recorded' }, text: 'Probed. <ralph>COMPLETE</ralph>' },
      ],
    });
    try {
      const mcp = { name: 'ralph', command: process.execPath, args: [CLI, 'mcp'], env: { [SIGNAL_FILE_ENV]: signalFile } };
      const run = await runCodex(bin!, home, input({ cwd: repo, writableRoots: [repo], model: 'scripted-model', mcp }), server.url);
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.ok(tools.includes('"name":"mcp__ralph"'), 'the MCP tools come as the mcp__ralph namespace');
      assert.deepEqual(await readSignalFile(signalFile), [{ kind: 'PROGRESS', percent: 50, note: 'hello' }]);
      assert.deepEqual(ofKind(run.events, 'tool_call'), [
        { kind: 'tool_call', id: 'item_1', name: 'mcp__ralph__report_progress', input: { percent: 50, note: 'hello' } },
      ]);
      assert.deepEqual(ofKind(run.events, 'tool_result'), [
        { kind: 'tool_result', id: 'item_1', ok: true, output: 'Progress 50% recorded. Continue.' },
      ]);
      assert.equal(ofKind(run.events, 'error').length, 0, 'the fallback-metadata warning is not an error');
      assert.equal(ofKind(run.events, 'result')[0].text, 'Probed. <ralph>COMPLETE</ralph>');
    } finally {
      await server.close();
    }
  });

  for (const status of [500, 401]) {
    it(`the API answers ${status}: Codex fails the turn and exits 1 (no retries with the provider's max_retries at 0)`, async () => {
      const server = await startResponsesServer({ steps: [{ fault: 'status', status }] });
      try {
        const mcp = { name: 'ralph', command: process.execPath, args: [CLI, 'mcp'], env: {} };
        const run = await runCodex(bin!, home, input({ cwd: repo, writableRoots: [repo], model: 'gpt-5.5', mcp }), server.url);
        assert.equal(run.code, 1);
        assert.equal(server.requests.length, 1);
        const result = ofKind(run.events, 'result');
        assert.equal(result.length, 1);
        assert.equal(result[0].isError, true);
        const expected = status === 401 ? /^unexpected status 401 Unauthorized/ : /high demand/;
        assert.match(result[0].message ?? '', expected);
      } finally {
        await server.close();
      }
    });
  }
});
