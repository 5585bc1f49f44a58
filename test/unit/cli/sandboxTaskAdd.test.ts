import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import { IsolatedCommandRunner, probeSandbox } from '../../../src/core/commands/sandbox';
import { SecretRedactor } from '../../../src/core/commands/secrets';
import { CLI, REPO_ROOT, runCliInProcess } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

describe("an agent's own `ralph task add` inside the sandbox", function () {
  if (process.platform !== 'linux') return;
  this.timeout(60000);
  let ws: TempWorkspace;
  before(async function () {
    const probe = await probeSandbox();
    if (!probe.available) {
      console.log(`      skipped: no working bubblewrap here (${probe.reason})`);
      this.skip();
    }
  });
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# x\n' } });
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    // the CLI under test must be visible in the sandbox: from a clone under /tmp (hidden by the
    // sandbox's private /tmp) it is reached through a top-level link, as a workspace's node_modules is
    await fs.symlink(REPO_ROOT, ws.path('ralph-under-test'));
  });
  afterEach(async () => ws?.cleanup());

  it('fails at once on the read-only .ralph/ with a clear message (no minute-long retries on the lock), and the task list is unchanged', async () => {
    const before = await ws.read('.ralph/tasks.json');
    const runner = new IsolatedCommandRunner(
      new NodeCommandRunner(),
      { root: ws.dir, commands: { sandbox: 'required', network: false, env: [] }, keyVariables: [] },
      new SecretRedactor(),
      () => undefined,
    );
    // the command's own timeout is well below the ≈ 100 s the lock used to retry a read-only file system for
    const result = await runner.run({
      command: `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} task add sneaky --prompt p --promise q`,
      cwd: ws.dir,
      timeoutMs: 20000,
      maxOutputChars: 10000,
    });
    assert.equal(result.timedOut, false, result.output);
    assert.equal(result.exitCode, 1, result.output);
    assert.match(
      result.output,
      /ralph: cannot change .*\.ralph\/tasks\.json: the file system is read-only here \(inside Ralph's sandbox \.ralph\/ is read-only/,
    );
    assert.equal(await ws.read('.ralph/tasks.json'), before);
  });
});
