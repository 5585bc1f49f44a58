import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { copilotAdapter, copilotArgs, copilotFiles, copilotMcpConfig, usageOf } from '../../src/core/agentCli/adapters/copilot';
import { readSignalFile, SIGNAL_FILE_ENV } from '../../src/core/agentCli/signalFile';
import type { AgentCliEvent, SessionInput } from '../../src/core/agentCli/types';
import { startScriptedServer } from '../fixtures/scriptedServer';
import { agentCliOrSkip } from '../unit/helpers/agentClis';
import { CLI } from '../unit/helpers/cliHarness';
import { copilotEnv, copilotPrompt } from '../unit/helpers/copilotCli';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const SAMPLES = path.join(REPO_ROOT, 'test/fixtures/agentCli/copilot');

/** All events of a captured `copilot --output-format json` output (1.0.102), read line by line, its usage file beside it. */
function parseSample(name: string): AgentCliEvent[] {
  const sessionDir = mkdtempSync(path.join(os.tmpdir(), 'ralph-copilot-sample-'));
  try {
    writeFileSync(copilotFiles(sessionDir).usage, readFileSync(path.join(SAMPLES, `${name}.usage.json`)));
    const parser = copilotAdapter.createParser({ sessionDir });
    const lines = readFileSync(path.join(SAMPLES, `${name}.jsonl`), 'utf8').split('\n');
    return [...lines.flatMap((line) => parser.line(line)), ...parser.end()];
  } finally {
    rmSync(sessionDir, { recursive: true, force: true });
  }
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

describe('the Copilot CLI adapter: launch', () => {
  it('a headless JSON session, tools allowed but paths checked, URLs and git push denied, the prompt on stdin', () => {
    const args = copilotArgs(input({ model: 'gpt-5.4', extraArgs: ['--experimental'], writableRoots: ['/work/task', '/work/shared'] }));
    const after = (flag: string) => args[args.indexOf(flag) + 1];
    assert.deepEqual(args.slice(0, 3), ['--output-format', 'json', '--allow-all-tools']);
    for (const flag of ['--disallow-temp-dir', '--deny-tool=url', '--deny-tool=shell(git push)', '--disable-builtin-mcps', '--no-ask-user'])
      assert.ok(args.includes(flag), flag);
    assert.equal(after('--add-dir'), '/work/shared', 'the other writable roots, not the task folder (always allowed)');
    assert.equal(args.filter((a) => a === '--add-dir').length, 1);
    assert.equal(after('--additional-mcp-config'), '@/work/.session/copilot-mcp.json');
    assert.equal(after('--usage-output-file'), '/work/.session/copilot-usage.json');
    assert.equal(after('--log-dir'), '/work/.session/copilot-logs', 'its logs stay in the session folder');
    assert.equal(after('--model'), 'gpt-5.4');
    const never = ['-p', '--prompt', '-r', '--resume', '--continue', '--allow-all', '--yolo', '--allow-all-paths', '--allow-all-urls'];
    assert.ok(!args.some((a) => never.includes(a) || a.startsWith('--resume=')), 'never resumed, never every path or URL');
    assert.equal(args.at(-1), '--experimental', 'extra arguments last');
    assert.ok(!copilotArgs(input()).includes('--model'), "no model: the person's own (COPILOT_MODEL, their settings)");
  });

  it('writes Ralph’s signal server into the session folder as a local MCP server; sets only COPILOT_AUTO_UPDATE', async () => {
    const sessionDir = mkdtempSync(path.join(os.tmpdir(), 'ralph-copilot-launch-'));
    try {
      const launch = await copilotAdapter.launch(input({ sessionDir }));
      assert.equal(launch.stdin, 'Do the task.');
      assert.deepEqual(launch.env, { COPILOT_AUTO_UPDATE: 'false' });
      const written = JSON.parse(readFileSync(copilotFiles(sessionDir).mcpConfig, 'utf8'));
      assert.deepEqual(written, {
        mcpServers: {
          ralph: {
            type: 'local',
            command: '/usr/bin/node',
            args: ['/opt/ralph/cli.js', 'mcp'],
            env: { RALPH_SIGNAL_FILE: '/s/signal.json' },
            tools: ['*'],
          },
        },
      });
      assert.deepEqual(written, copilotMcpConfig(input().mcp));
    } finally {
      rmSync(sessionDir, { recursive: true, force: true });
    }
  });

  it('names its package, command and label', () => {
    assert.equal(copilotAdapter.kind, 'copilot');
    assert.equal(copilotAdapter.label, 'Copilot CLI');
    assert.equal(copilotAdapter.defaultCommand, 'copilot');
    assert.equal(copilotAdapter.npmPackage, '@github/copilot');
  });
});

describe('the Copilot CLI adapter: reading real `--output-format json` output (1.0.102)', () => {
  it('a finished session: its tool calls and results, the refused ones failed, its text, id and model, the usage file’s tokens', () => {
    const events = parseSample('session');
    assert.deepEqual(
      ofKind(events, 'tool_call').map((c) => [c.id, c.name]),
      [
        ['call_1_0', 'bash'],
        ['call_2_0', 'ralph-report_progress'],
        ['call_3_0', 'create'],
        ['call_4_0', 'bash'],
        ['call_5_0', 'bash'],
      ],
    );
    assert.deepEqual(ofKind(events, 'tool_call')[0].input, {
      command: 'echo from-shell > shell.txt && cat shell.txt',
      description: 'write',
    });
    const results = ofKind(events, 'tool_result');
    assert.deepEqual(results[0], {
      kind: 'tool_result',
      id: 'call_1_0',
      ok: true,
      output: 'from-shell\n<shellId: 0 completed with exit code 0>',
    });
    assert.deepEqual(results[1], { kind: 'tool_result', id: 'call_2_0', ok: true, output: 'Progress 50% recorded. Continue.' });
    assert.match(results[2].output, /^Permission denied because no interactive user response was available/, 'a path outside the folder');
    assert.equal(results[3].output, 'Permission to run this tool was denied due to the following rules: `url`');
    assert.equal(results[4].output, 'Permission to run this tool was denied due to the following rules: `shell(git push)`');
    assert.deepEqual(
      results.map((r) => r.ok),
      [true, true, false, false, false],
    );
    assert.deepEqual(ofKind(events, 'text'), [{ kind: 'text', text: 'All done. <ralph>COMPLETE</ralph>' }]);
    assert.deepEqual(ofKind(events, 'session'), [{ kind: 'session', id: '1fe3ef2b-935b-48cd-9e1e-0ba54a9e6e93', model: 'scripted-model' }]);
    assert.deepEqual(ofKind(events, 'result'), [{ kind: 'result', text: 'All done. <ralph>COMPLETE</ralph>', isError: false }]);
    assert.deepEqual(events.at(-1), { kind: 'usage', inputTokens: 34472, outputTokens: 89, cachedTokens: 0 }, 'read at the end');
    assert.equal(ofKind(events, 'retry').length + ofKind(events, 'error').length, 0);
  });

  it('a refused key (401): reported at its first refusal, then Copilot’s own message as the failed result', () => {
    const events = parseSample('auth-error-401');
    const retries = ofKind(events, 'retry');
    assert.deepEqual(retries[0], { kind: 'retry', attempt: 1, maxRetries: 5, delayMs: 0, status: 401, message: 'scripted 401' });
    const result = ofKind(events, 'result')[0];
    assert.equal(result.isError, true);
    assert.match(result.message ?? '', /^Authentication failed with provider at http:\/\/127\.0\.0\.1:\d+\/v1 \(HTTP 401\)/);
    assert.deepEqual(ofKind(events, 'usage'), [], 'no tokens spent');
  });

  it('a failing endpoint (500): each of Copilot’s retries once, the last failure its error', () => {
    const events = parseSample('api-error-500');
    assert.deepEqual(
      ofKind(events, 'retry').map((r) => [r.attempt, r.status]),
      [1, 2, 3, 4, 5].map((n) => [n, 500]),
    );
    assert.match(ofKind(events, 'error')[0].message, /retried 5 times .*Last error: 500 scripted 500/);
    assert.equal(ofKind(events, 'result')[0].isError, true);
  });

  it('malformed and unknown lines are skipped, never thrown; no usage file, no usage', () => {
    const parser = copilotAdapter.createParser({ sessionDir: path.join(os.tmpdir(), 'ralph-copilot-no-such-dir') });
    const junk = [
      '',
      'not json',
      '{broken',
      '[1,2]',
      'null',
      '{"type":"tool.execution_start"}',
      '{"type":"assistant.message","data":null}',
    ];
    junk.push('{"type":"mystery"}', '{"type":"tool.execution_complete","data":{"success":"yes"}}', '{"type":"result"}');
    junk.push('{"type":"model.call_failure","data":{"errorMessage":"{not json"}}', '{"type":"assistant.turn_retry"}');
    for (const line of junk) assert.doesNotThrow(() => parser.line(line));
    assert.deepEqual(parser.end(), []);
    assert.deepEqual(usageOf('/nonexistent/usage.json'), []);
  });

  it('a session that stops before its result line (stdout and stderr empty): the error its log names', () => {
    const sessionDir = mkdtempSync(path.join(os.tmpdir(), 'ralph-copilot-log-'));
    try {
      const logs = copilotFiles(sessionDir).logs;
      mkdirSync(logs, { recursive: true });
      // lines as Copilot 1.0.102 wrote them when its ~/.copilot could not be written
      writeFileSync(
        path.join(logs, 'process-1.log'),
        [
          '2026-12-05T06:03:21.519Z [WARNING] Failed to reload managed hooks after enabling managed settings',
          '2026-12-05T06:03:21.535Z [ERROR] Failed to initialize workspace: Error: EROFS: Read-only file system (os error 30)',
          '2026-12-05T06:03:21.538Z [DEBUG] Policy directory /etc/github-copilot/policy.d not readable',
          '2026-12-05T06:03:21.547Z [ERROR] Failed to load package index: EROFS',
        ].join('\n'),
      );
      const stopped = copilotAdapter.createParser({ sessionDir });
      assert.deepEqual(stopped.end(), [
        {
          kind: 'error',
          message:
            'its log says: Failed to initialize workspace: Error: EROFS: Read-only file system (os error 30); Failed to load package index: EROFS',
        },
      ]);
      // a session that ended with its result line: its log's errors are not the session's
      const ended = copilotAdapter.createParser({ sessionDir });
      ended.line('{"type":"result","sessionId":"s-1","exitCode":0}');
      assert.deepEqual(
        ended.end().filter((e) => e.kind === 'error'),
        [],
      );
    } finally {
      rmSync(sessionDir, { recursive: true, force: true });
    }
  });
});

describe('the Copilot CLI adapter: a real copilot session against the scripted server', function () {
  this.timeout(90_000);
  let bin: string;
  let home: string;
  let repo: string;

  beforeEach(function () {
    bin = agentCliOrSkip('copilot', this).bin;
    home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'ralph-copilot-')));
    repo = path.join(home, 'repo');
    mkdirSync(repo);
    writeFileSync(path.join(repo, 'README.md'), 'first line\n');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
    git('init', '-q');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qam', 'init', '--allow-empty');
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('runs a command and Ralph’s MCP tool in the task folder, is refused outside it; its tokens from the usage file', async () => {
    const signalFile = path.join(home, 'signals.ndjson');
    const outside = path.join(home, 'outside.txt');
    const server = await startScriptedServer({
      steps: [
        { toolCalls: [{ name: 'bash', arguments: { command: 'echo from-shell > shell.txt', description: 'write' } }] },
        { toolCalls: [{ name: 'ralph-report_progress', arguments: { percent: 50, note: 'hello' } }] },
        { toolCalls: [{ name: 'create', arguments: { path: outside, file_text: 'x' } }] },
        { content: 'All done. <ralph>COMPLETE</ralph>' },
      ],
      defaultUsage: { prompt_tokens: 1000, completion_tokens: 7, cached_tokens: 600 },
    });
    const made = await copilotEnv(server.url);
    const sessionDir = path.join(home, 'session');
    mkdirSync(sessionDir);
    try {
      // Ralph's own signal server, as a run gives it
      const mcp = { name: 'ralph', command: process.execPath, args: [CLI, 'mcp'], env: { [SIGNAL_FILE_ENV]: signalFile } };
      const launch = await copilotAdapter.launch(input({ cwd: repo, writableRoots: [repo], sessionDir, mcp }));
      const child = spawn(bin, launch.args, {
        cwd: repo,
        env: { ...made.env, ...launch.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
      child.stdin.end(launch.stdin);
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 60_000);
      const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
      clearTimeout(timer);
      const parser = copilotAdapter.createParser({ sessionDir });
      const events = [...stdout.split('\n').flatMap((l) => parser.line(l)), ...parser.end()];
      assert.equal(code, 0, stdout);
      assert.equal(readFileSync(path.join(repo, 'shell.txt'), 'utf8'), 'from-shell\n');
      assert.deepEqual(await readSignalFile(signalFile), [{ kind: 'PROGRESS', percent: 50, note: 'hello' }]);
      assert.ok(!existsSync(outside), 'nothing written outside the task folder');
      assert.deepEqual(
        ofKind(events, 'tool_result').map((r) => r.ok),
        [true, true, false],
      );
      assert.deepEqual(ofKind(events, 'result'), [{ kind: 'result', text: 'All done. <ralph>COMPLETE</ralph>', isError: false }]);
      // the tokens the server reported for its 4 replies, summed over the session
      assert.deepEqual(ofKind(events, 'usage'), [{ kind: 'usage', inputTokens: 4000, outputTokens: 28, cachedTokens: 2400 }]);
      assert.equal(server.requests.length, 4, 'one request a turn, nothing else');
      assert.equal(server.requests[0].headers.authorization, 'Bearer sk-test-copilot');
      assert.equal(copilotPrompt(server.requests[0]), 'Do the task.', 'the prompt came through stdin');
      assert.ok(JSON.stringify(server.requests[0].body?.tools).includes('"ralph-ralph_complete"'), 'the signal tools are offered');
      assert.ok(existsSync(path.join(sessionDir, 'copilot-logs')), 'its logs in the session folder');
    } finally {
      await server.close();
      rmSync(made.home, { recursive: true, force: true });
    }
  });
});
