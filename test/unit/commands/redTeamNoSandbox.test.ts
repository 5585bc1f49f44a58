import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CommandQuestions } from '../../../src/core/commands/commandQuestions';
import { CommandRefusedError, PolicyCommandRunner } from '../../../src/core/commands/policyCommandRunner';
import type { CommandRequest, CommandResult, CommandRunner } from '../../../src/core/commands/processRunner';
import { parseConfig } from '../../../src/core/config/load';
import { refuseApprovals } from '../../../src/core/ports';
import { HIDDEN_REFUSED, RED_TEAM_REFUSED } from './redTeamCases';

/** Records what reached the process runner; runs nothing (these lines would harm the machine). */
class RecordingRunner implements CommandRunner {
  readonly ran: string[] = [];
  async run(request: CommandRequest): Promise<CommandResult> {
    this.ran.push(request.command);
    return { exitCode: 0, signal: null, timedOut: false, aborted: false, output: '', truncated: false, durationMs: 0 };
  }
}

/** The attacks: code the rules cannot read, which only a sandbox confines. */
const UNSEEN = [
  `node -e "require('fs').rmSync('/some/folder', {recursive: true})"`,
  `perl -e 'use File::Path; rmtree("/some/folder")'`,
  `node -e "require('fs').appendFileSync(require('os').homedir() + '/.bashrc', 'x')"`,
  "python3 - <<'EOF'\nimport shutil; shutil.rmtree('/some/folder')\nEOF",
];

describe('the red-team cases through the policy runner, without a sandbox and with one (issue 48)', () => {
  let root: string;
  before(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'ralph-redteam-'));
    mkdirSync(path.join(root, 'dist'));
    mkdirSync(path.join(root, '.git', 'hooks'), { recursive: true });
    symlinkSync(path.join(root, '.git', 'hooks'), path.join(root, 'hooks-link'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  const runner = (sandbox: 'off' | 'auto', confined: boolean) => {
    const inner = new RecordingRunner();
    const questions = new CommandQuestions();
    questions.begin({ id: 'T-001' });
    const policy = new PolicyCommandRunner(inner, parseConfig({ commands: { sandbox } }), refuseApprovals, root, () => {}, {
      questions,
      confined: async () => confined,
    });
    const attempt = (command: string) => policy.run({ command, cwd: root, timeoutMs: 1000, maxOutputChars: 1000 });
    return { inner, attempt };
  };

  for (const [sandbox, confined] of [
    ['off', false],
    ['auto', true],
  ] as const) {
    it(`refuses every red-team command (${confined ? 'sandboxed' : 'commands.sandbox "off"'}): none reaches the process runner`, async () => {
      const { inner, attempt } = runner(sandbox, confined);
      const through: string[] = [];
      for (const command of [...RED_TEAM_REFUSED, ...HIDDEN_REFUSED]) {
        await attempt(command).then(
          () => through.push(command),
          (error: unknown) => assert.ok(error instanceof CommandRefusedError, String(error)),
        );
      }
      assert.deepEqual(through, []);
      assert.deepEqual(inner.ran, []);
    });
  }

  it('keeps unseen code from running unconfined (the task asks a person) and lets the sandbox confine it', async () => {
    const off = runner('off', false);
    for (const command of UNSEEN)
      await assert.rejects(off.attempt(command), /needs a person's approval .*code given inline|reading its program from stdin/s);
    assert.deepEqual(off.inner.ran, []);
    const sandboxed = runner('auto', true);
    for (const command of UNSEEN) await sandboxed.attempt(command);
    assert.deepEqual(sandboxed.inner.ran, UNSEEN, 'inside the sandbox such code reaches nothing outside the workspace');
  });
});
