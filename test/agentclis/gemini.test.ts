import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { promises as fs, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { geminiAdapter, geminiLaunch, mergeSettings, stripJsonComments } from '../../src/core/agentCli/adapters/gemini';
import { readSignalFile, SIGNAL_FILE_ENV } from '../../src/core/agentCli/signalFile';
import type { AgentCliEvent, SessionInput } from '../../src/core/agentCli/types';
import { startGeminiServer } from '../fixtures/geminiServer';
import { agentCliOrSkip } from '../unit/helpers/agentClis';
import { CLI } from '../unit/helpers/cliHarness';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const SAMPLES = path.join(REPO_ROOT, 'test/fixtures/agentCli/gemini');

/** All events of a captured `gemini --output-format stream-json` output (0.61.0), read line by line. */
function parseSample(name: string): AgentCliEvent[] {
  const parser = geminiAdapter.createParser();
  const lines = readFileSync(path.join(SAMPLES, `${name}.jsonl`), 'utf8').split('\n');
  return [...lines.flatMap((line) => parser.line(line)), ...parser.end()];
}

const ofKind = <K extends AgentCliEvent['kind']>(events: AgentCliEvent[], kind: K) =>
  events.filter((e): e is Extract<AgentCliEvent, { kind: K }> => e.kind === kind);

const MCP = { name: 'ralph', command: '/usr/bin/node', args: ['/opt/ralph/cli.js', 'mcp'], env: { RALPH_SIGNAL_FILE: '/s/signal.json' } };

describe('the Gemini CLI adapter: launch', () => {
  let tmp: string;
  let userHome: string;
  const input = (overrides: Partial<SessionInput> = {}): SessionInput => ({
    cwd: '/work/task',
    prompt: 'Do the task.',
    extraArgs: [],
    mcp: MCP,
    sessionDir: path.join(tmp, 'session'),
    writableRoots: ['/work/task'],
    ...overrides,
  });

  beforeEach(async () => {
    tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'ralph-gemini-launch-')));
    userHome = path.join(tmp, 'user');
    await fs.mkdir(path.join(tmp, 'session'));
    await fs.mkdir(path.join(userHome, '.gemini'), { recursive: true });
  });
  afterEach(() => fs.rm(tmp, { recursive: true, force: true }));

  it('starts a headless stream-json session in yolo mode, the folder trusted, the prompt on stdin, a Gemini home of its own', async () => {
    const { args, env, stdin } = await geminiLaunch(input({ model: 'gemini-2.5-pro', extraArgs: ['--debug'] }), userHome);
    assert.deepEqual(args, [
      '--output-format',
      'stream-json',
      '--approval-mode',
      'yolo',
      '--skip-trust',
      '--model',
      'gemini-2.5-pro',
      '--debug',
    ]);
    assert.ok(!args.includes('--resume') && !args.includes('-p'), 'a new session; the prompt is not on the command line');
    assert.equal(stdin, 'Do the task.');
    assert.deepEqual(env, {
      GEMINI_CLI_HOME: path.join(tmp, 'session', 'gemini-home'),
      TMPDIR: path.join(tmp, 'session', 'tmp'),
      GEMINI_CLI_NO_RELAUNCH: 'true',
    });
    assert.ok((await fs.stat(env.TMPDIR)).isDirectory());
  });

  it("runs as one process (no relaunch of Node), unless the person's environment says otherwise (even empty)", async () => {
    assert.equal((await geminiLaunch(input({ env: { HOME: userHome } }), userHome)).env.GEMINI_CLI_NO_RELAUNCH, 'true');
    const theirs = await geminiLaunch(input({ env: { HOME: userHome, GEMINI_CLI_NO_RELAUNCH: '' } }), userHome);
    assert.equal('GEMINI_CLI_NO_RELAUNCH' in theirs.env, false, 'their own value reaches the CLI: the launch does not override it');
  });

  it('names the other writable roots with --include-directories, and no --model when none is given', async () => {
    const { args } = await geminiLaunch(input({ writableRoots: ['/work/task', '/work/shared', '/work/more'] }), userHome);
    assert.deepEqual(args.slice(args.indexOf('--include-directories'), args.indexOf('--include-directories') + 2), [
      '--include-directories',
      '/work/shared,/work/more',
    ]);
    assert.ok(!args.includes('--model'));
  });

  it("its settings are the person's with Ralph's merged in; the person's other entries are linked, their files untouched", async () => {
    const own = path.join(userHome, '.gemini');
    const theirs = `{\n  // mine\n  "security": { "auth": { "selectedType": "oauth-personal" } },\n  "general": { "vimMode": true, "enableAutoUpdate": true },\n  "mcpServers": { "docs": { "command": "docs-mcp" } }, /* trailing */\n}\n`;
    await fs.writeFile(path.join(own, 'settings.json'), theirs);
    await fs.writeFile(path.join(own, 'oauth_creds.json'), '{"token":"t"}');
    await fs.mkdir(path.join(own, 'extensions'));
    await geminiLaunch(input(), userHome);
    const dir = path.join(tmp, 'session', 'gemini-home', '.gemini');
    const settings = JSON.parse(await fs.readFile(path.join(dir, 'settings.json'), 'utf8'));
    assert.deepEqual(settings, {
      security: { auth: { selectedType: 'oauth-personal' } },
      general: { vimMode: true, enableAutoUpdate: false, enableAutoUpdateNotification: false },
      mcpServers: {
        docs: { command: 'docs-mcp' },
        ralph: { command: '/usr/bin/node', args: ['/opt/ralph/cli.js', 'mcp'], env: { RALPH_SIGNAL_FILE: '/s/signal.json' }, trust: true },
      },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
    });
    assert.equal(await fs.readlink(path.join(dir, 'oauth_creds.json')), path.join(own, 'oauth_creds.json'));
    assert.equal(await fs.readlink(path.join(dir, 'extensions')), path.join(own, 'extensions'));
    assert.equal(await fs.readFile(path.join(own, 'settings.json'), 'utf8'), theirs, 'the person’s settings are not written');
  });

  it('a person without a ~/.gemini gets Ralph’s settings alone; unreadable settings stop the session with a clear error', async () => {
    await geminiLaunch(input(), path.join(tmp, 'nobody'));
    const file = path.join(tmp, 'session', 'gemini-home', '.gemini', 'settings.json');
    assert.deepEqual(Object.keys(JSON.parse(await fs.readFile(file, 'utf8'))), ['mcpServers', 'general', 'privacy', 'telemetry']);
    await fs.writeFile(path.join(userHome, '.gemini', 'settings.json'), '{ "general": ');
    await fs.rm(path.join(tmp, 'session', 'gemini-home'), { recursive: true });
    await assert.rejects(geminiLaunch(input(), userHome), /Gemini CLI's settings \(.*settings\.json\) are not a JSON object/);
  });

  it("finds the person's ~/.gemini where the CLI's environment puts it (agent.env's HOME, or GEMINI_CLI_HOME over it), not this process's home", async () => {
    const other = path.join(tmp, 'other');
    await fs.mkdir(path.join(other, '.gemini'), { recursive: true });
    await fs.writeFile(path.join(userHome, '.gemini', 'settings.json'), '{"security": {"auth": {"selectedType": "gemini-api-key"}}}');
    await fs.writeFile(path.join(other, '.gemini', 'settings.json'), '{"security": {"auth": {"selectedType": "oauth-personal"}}}');
    const file = path.join(tmp, 'session', 'gemini-home', '.gemini', 'settings.json');
    const auth = async () => JSON.parse(await fs.readFile(file, 'utf8')).security.auth.selectedType;
    const home = process.platform === 'win32' ? 'USERPROFILE' : 'HOME';
    await geminiLaunch(input({ env: { [home]: userHome } }));
    assert.equal(await auth(), 'gemini-api-key');
    await fs.rm(path.join(tmp, 'session', 'gemini-home'), { recursive: true });
    await geminiLaunch(input({ env: { [home]: userHome, GEMINI_CLI_HOME: other } }));
    assert.equal(await auth(), 'oauth-personal');
  });

  it('reads JSON with comments as Gemini CLI does, leaving strings alone; merges objects key by key', () => {
    const text = '{"a": "x // not a comment", /* c */ "b": [1, 2,], // end\n "c": "/* kept */"}';
    assert.deepEqual(JSON.parse(stripJsonComments(text)), { a: 'x // not a comment', b: [1, 2], c: '/* kept */' });
    assert.deepEqual(mergeSettings({ a: { b: 1, c: [1] }, d: 1 }, { a: { c: [2] }, e: 2 }), { a: { b: 1, c: [2] }, d: 1, e: 2 });
  });

  it('names its package, command and key variables', () => {
    assert.equal(geminiAdapter.kind, 'gemini');
    assert.equal(geminiAdapter.label, 'Gemini CLI');
    assert.equal(geminiAdapter.defaultCommand, 'gemini');
    assert.equal(geminiAdapter.npmPackage, '@google/gemini-cli');
    assert.ok(geminiAdapter.keyVariables.includes('GEMINI_API_KEY'));
  });
});

describe('the Gemini CLI adapter: reading real stream-json output (0.61.0)', () => {
  it('a finished session: its id and model, whole messages from the pieces, tool calls and results, the tokens, the last message', () => {
    const events = parseSample('shell-write-mcp-complete');
    assert.deepEqual(events[0], { kind: 'session', id: '7ec89d92-ecbc-4ada-869b-b2cb1d321bb7', model: 'gemini-2.5-pro' });
    assert.deepEqual(
      ofKind(events, 'text').map((e) => e.text),
      ['Looking around first.', 'Done: notes.txt holds the edited line. <ralph>COMPLETE</ralph>'],
    );
    const calls = ofKind(events, 'tool_call');
    assert.deepEqual(
      calls.map((c) => c.name),
      ['run_shell_command', 'write_file', 'run_shell_command', 'mcp_ralph_ralph_complete'],
    );
    assert.deepEqual(calls[1].input, { file_path: 'notes.txt', content: 'edited line\n' });
    assert.deepEqual(calls[3].input, { summary: 'notes written', promiseEvidence: 'notes.txt holds the line' });
    const results = ofKind(events, 'tool_result');
    assert.deepEqual(
      results.map((r) => [r.id, r.ok]),
      calls.map((c) => [c.id, true]),
    );
    assert.equal(results[0].output, 'hello-from-shell\nREADME.md');
    assert.match(results[3].output, /^Completion recorded/);
    assert.deepEqual(ofKind(events, 'usage'), [{ kind: 'usage', inputTokens: 2306, outputTokens: 130, cachedTokens: 100 }]);
    assert.deepEqual(events.at(-1), {
      kind: 'result',
      text: 'Done: notes.txt holds the edited line. <ralph>COMPLETE</ralph>',
      isError: false,
    });
    assert.equal(ofKind(events, 'error').length, 0);
    assert.ok(
      !events.some((e) => e.kind === 'total_cost' || (e.kind === 'usage' && e.costUsd !== undefined)),
      'Gemini CLI reports no cost',
    );
  });

  it('a failed tool is a failed result carrying its error', () => {
    const results = ofKind(parseSample('tool-error'), 'tool_result');
    assert.equal(results.length, 1);
    assert.equal(results[0].ok, false);
    assert.match(results[0].output, /^File not found: .*missing\.txt$/);
  });

  it('a refused key: a failed result carrying the API error (its 401), no tokens', () => {
    const events = parseSample('api-error-401');
    assert.equal(ofKind(events, 'usage').length, 0);
    const result = events.at(-1);
    assert.equal(result?.kind, 'result');
    assert.ok(result?.kind === 'result' && result.isError);
    assert.match(result.message ?? '', /"code":401.*API key not valid/);
  });

  it('malformed and unknown lines are skipped, never thrown; a stream cut before its result is a failure', () => {
    const fresh = geminiAdapter.createParser();
    const junk = ['', 'not json', '{broken', '[1,2]', 'null', '{"type":"message"}', '{"type":"tool_use"}', '{"type":"result"}'];
    junk.push('{"type":"result","stats":"lots"}', '{"type":"mystery"}', '{"type":"error"}', '{"type":"tool_result","status":"error"}');
    for (const line of junk) assert.doesNotThrow(() => fresh.line(line));
    const parser = geminiAdapter.createParser();
    parser.line('{"type":"init","session_id":"s-1","model":"m"}');
    parser.line('{"type":"message","role":"assistant","content":"half ","delta":true}');
    assert.deepEqual(parser.line('{"type":"error","severity":"warning","message":"loop suspected"}'), [{ kind: 'text', text: 'half ' }]);
    assert.deepEqual(parser.line('{"type":"error","severity":"error","message":"Maximum session turns exceeded"}'), [
      { kind: 'error', message: 'Maximum session turns exceeded' },
    ]);
    assert.deepEqual(parser.end(), [{ kind: 'result', text: 'half ', isError: true, message: 'Maximum session turns exceeded' }]);
    assert.deepEqual(geminiAdapter.createParser().end(), [], 'nothing started, nothing to report');
  });
});

describe('the Gemini CLI adapter: a real gemini session against the scripted Gemini API server', function () {
  this.timeout(90_000);
  let tmp: string | undefined;

  afterEach(async () => {
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
    tmp = undefined;
  });

  it('runs a command, writes a file, and one in another writable root, is refused a write elsewhere; its MCP COMPLETE reaches Ralph', async function () {
    const bin = agentCliOrSkip('gemini', this).bin;
    const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'ralph-gemini-session-')));
    tmp = root;
    const [home, repo, sessionDir, shared] = ['home', 'repo', 'session', 'shared'].map((d) => path.join(root, d));
    for (const dir of [path.join(home, '.gemini'), repo, sessionDir, shared]) await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(home, '.gemini', 'settings.json'), '{"security":{"auth":{"selectedType":"gemini-api-key"}}}');
    execFileSync('git', ['init', '-q'], { cwd: repo });
    const outside = path.join(root, 'outside.txt');
    const server = await startGeminiServer({
      steps: [
        {
          text: 'Looking first.',
          functionCalls: [{ name: 'run_shell_command', args: { command: 'echo from-shell > shell.txt', description: 'x' } }],
        },
        { functionCalls: [{ name: 'write_file', args: { file_path: 'notes.txt', content: 'written\n' } }] },
        { functionCalls: [{ name: 'write_file', args: { file_path: path.join(shared, 'shared.txt'), content: 'shared\n' } }] },
        { functionCalls: [{ name: 'write_file', args: { file_path: outside, content: 'escaped\n' } }] },
        { functionCalls: [{ name: 'mcp_ralph_ralph_complete', args: { summary: 'notes written', promiseEvidence: 'notes.txt exists' } }] },
        { text: 'All done.', usage: { promptTokenCount: 500, candidatesTokenCount: 10 } },
      ],
    });
    try {
      const signals = path.join(sessionDir, 'signals.ndjson');
      const mcp = { name: 'ralph', command: process.execPath, args: [CLI, 'mcp'], env: { [SIGNAL_FILE_ENV]: signals } };
      const launch = await geminiLaunch(
        { cwd: repo, prompt: 'Do the task.', model: 'gemini-2.5-pro', extraArgs: [], mcp, sessionDir, writableRoots: [repo, shared] },
        home,
      );
      const env = { ...process.env, ...launch.env, HOME: home, GOOGLE_GEMINI_BASE_URL: server.url, GEMINI_API_KEY: 'test-gemini-key' };
      const child = spawn(bin, launch.args, { cwd: repo, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      child.stdin.end(launch.stdin);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 60_000);
      const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
      clearTimeout(timer);
      assert.equal(code, 0, stderr + stdout);
      const parser = geminiAdapter.createParser();
      const events = [...stdout.split('\n').flatMap((l) => parser.line(l)), ...parser.end()];
      assert.equal(await fs.readFile(path.join(repo, 'shell.txt'), 'utf8'), 'from-shell\n');
      assert.equal(await fs.readFile(path.join(repo, 'notes.txt'), 'utf8'), 'written\n');
      assert.equal(
        await fs.readFile(path.join(shared, 'shared.txt'), 'utf8'),
        'shared\n',
        'the other writable root (--include-directories)',
      );
      await assert.rejects(fs.access(outside), 'nothing was written outside the writable roots');
      assert.deepEqual(
        ofKind(events, 'tool_result').map((r) => r.ok),
        [true, true, true, false, true],
      );
      assert.deepEqual(await readSignalFile(signals), [
        { kind: 'COMPLETE', summary: 'notes written', promiseEvidence: 'notes.txt exists' },
      ]);
      assert.deepEqual(events.at(-1), { kind: 'result', text: 'All done.', isError: false });
      assert.equal(ofKind(events, 'usage')[0].outputTokens > 10, true);
      assert.deepEqual(
        server.requests.map((r) => `${r.method} ${r.path} ${r.outcome}`),
        Array(6).fill('POST /v1beta/models/gemini-2.5-pro:streamGenerateContent reply'),
        'nothing but the model’s turns reached the network',
      );
      assert.equal(server.requests[0].headers['x-goog-api-key'], 'test-gemini-key');
      const declared = (server.requests[0].body?.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name));
      assert.ok(declared.includes('mcp_ralph_ralph_complete') && declared.includes('mcp_ralph_report_progress'), declared.join(','));
      assert.equal(JSON.parse(await fs.readFile(path.join(home, '.gemini', 'settings.json'), 'utf8')).mcpServers, undefined);
    } finally {
      await server.close();
    }
  });
});
