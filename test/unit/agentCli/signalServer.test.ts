import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readSignalFile, SIGNAL_FILE_ENV } from '../../../src/core/agentCli/signalFile';
import { CLI } from '../helpers/cliHarness';

/** `ralph mcp` as an agent CLI meets it: a real stdio MCP server, spoken to by the SDK's own client. */
describe('ralph mcp: the signal tools over stdio', () => {
  let dir: string;
  let client: Client;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-mcp-'));
    client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp'],
        env: { PATH: process.env.PATH ?? '', [SIGNAL_FILE_ENV]: path.join(dir, 'signals.ndjson') },
        stderr: 'pipe',
      }),
    );
  });

  afterEach(async () => {
    await client.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('lists the built-in agent signal tools under the same names, with their arguments', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['ask_for_help', 'ralph_complete', 'report_blocked', 'report_progress']);
    const complete = tools.find((t) => t.name === 'ralph_complete');
    assert.deepEqual(Object.keys(complete?.inputSchema.properties ?? {}).sort(), ['artifactPaths', 'promiseEvidence', 'summary']);
    assert.deepEqual([...(complete?.inputSchema.required ?? [])].sort(), ['promiseEvidence', 'summary']);
  });

  it('records each signal in the session file, in order; the agent is told the gates decide', async () => {
    const progress = await client.callTool({ name: 'report_progress', arguments: { percent: 40, note: 'parser done' } });
    assert.match(JSON.stringify(progress.content), /Progress 40% recorded/);
    const done = await client.callTool({
      name: 'ralph_complete',
      arguments: { summary: 'fixed the parser', promiseEvidence: 'npm test passes (12 tests)' },
    });
    assert.match(JSON.stringify(done.content), /verify it with the quality gates/);
    assert.deepEqual(await readSignalFile(path.join(dir, 'signals.ndjson')), [
      { kind: 'PROGRESS', percent: 40, note: 'parser done' },
      { kind: 'COMPLETE', summary: 'fixed the parser', promiseEvidence: 'npm test passes (12 tests)' },
    ]);
  });

  it('refuses a call with arguments that do not fit, and records nothing for it', async () => {
    const bad = await client.callTool({ name: 'ralph_complete', arguments: { summary: '' } }).catch((error: Error) => ({
      isError: true,
      content: [{ type: 'text', text: error.message }],
    }));
    assert.equal(bad.isError, true);
    assert.deepEqual(await readSignalFile(path.join(dir, 'signals.ndjson')), []);
  });
});
