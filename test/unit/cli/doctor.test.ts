import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { probeSandbox } from '../../../src/core/commands/sandbox';
import { bubblewrapInstall, osReleaseIds, sandboxAdvice } from '../../../src/core/commands/sandboxAdvice';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { CLI_ENV, runCli, runCliInProcess } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** Where a program is on this machine's PATH, or undefined. */
function which(name: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

describe('ralph doctor and the no-sandbox warning of ralph run (issue 48)', function () {
  this.timeout(60000);
  let ws: TempWorkspace;
  /** A PATH with git, node and npm but no bwrap: a machine without the sandbox. */
  let bare: string;
  const configure = (extra: object) =>
    fs.writeFile(
      ws.path('.ralph/config.json'),
      JSON.stringify({
        llm: { baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: TEST_KEY_ENV, models: ['model-a'] },
        gates: [{ name: 'tests', kind: 'tests', command: 'npm test' }],
        ...extra,
      }),
    );

  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'package.json': '{"scripts":{"test":"node -e 0"}}\n' } });
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    await configure({});
    bare = await ws.outsideDir();
    for (const program of ['git', 'node', 'npm']) {
      const found = which(program);
      if (found) await fs.symlink(found, path.join(bare, program));
    }
  });
  afterEach(() => ws.cleanup());

  it('without bwrap on PATH: the sandbox is a warning under "auto" with the command that installs it, missing under "required" (exit 1)', async function () {
    if (process.platform !== 'linux') this.skip(); // bubblewrap is Linux's sandbox
    const env = { ...CLI_ENV, PATH: bare };
    const auto = await runCli(['doctor'], ws.dir, env);
    assert.equal(auto.code, 0, auto.stdout + auto.stderr);
    assert.match(auto.stdout, /^ok +git: git version/m);
    assert.match(auto.stdout, /^ok +repository: a git repository/m);
    assert.match(auto.stdout, /^ok +model endpoint \(model-a\): http:\/\/127\.0\.0\.1:9\/v1, key in RALPH_UNIT_TEST_KEY/m);
    assert.match(auto.stdout, /^ok +gate tests: npm test/m);
    assert.match(auto.stdout, /^warning +sandbox: bubblewrap \(bwrap\) not found/m);
    assert.match(auto.stdout, new RegExp(`fix: install bubblewrap: ${bubblewrapInstall().replace(/[.+]/g, '\\$&')}`));
    assert.match(auto.stdout, /ready to run \(1 warning\)/);

    await configure({ commands: { sandbox: 'required' } });
    const required = await runCli(['doctor', '--json'], ws.dir, env);
    assert.equal(required.code, 1);
    const report = JSON.parse(required.stdout) as { ok: boolean; checks: { name: string; ok: boolean; needed: boolean; fix?: string }[] };
    assert.equal(report.ok, false);
    const sandbox = report.checks.find((c) => c.name === 'sandbox');
    assert.deepEqual([sandbox?.ok, sandbox?.needed], [false, true]);
    assert.match(sandbox?.fix ?? '', /bubblewrap/);
  });

  it('with bwrap on PATH: the sandbox is there', async function () {
    if (process.platform !== 'linux' || !which('bwrap') || !(await probeSandbox()).available) this.skip(); // a working bwrap
    const result = await runCli(['doctor'], ws.dir);
    assert.match(result.stdout, /^ok +sandbox: bubblewrap confines the agent's commands/m, result.stdout + result.stderr);
    assert.equal(result.code, 0);
  });

  it('names what is missing with its fix: a key, a program a gate calls, an npm script (exit 1)', async () => {
    await configure({
      llm: { apiKeyEnv: 'RALPH_DOCTOR_ABSENT_KEY', models: ['gpt-4.1'] },
      gates: [
        { name: 'lint', kind: 'lint', command: 'ralph-doctor-no-such-linter --check .' },
        { name: 'types', kind: 'types', command: 'npm run typecheck' },
        { name: 'extra', kind: 'custom', command: 'ralph-doctor-optional', required: false },
      ],
    });
    const result = await runCli(['doctor'], ws.dir);
    assert.equal(result.code, 1, result.stdout);
    assert.match(
      result.stdout,
      /^MISSING +model endpoint \(gpt-4\.1\): https:\/\/api\.openai\.com\/v1: RALPH_DOCTOR_ABSENT_KEY is not set\n\s+fix: export RALPH_DOCTOR_ABSENT_KEY=/m,
    );
    assert.match(result.stdout, /^MISSING +gate lint: .*ralph-doctor-no-such-linter \(not found\)/m);
    assert.match(result.stdout, /^MISSING +gate types: .*the script "typecheck" \(not in package\.json\)/m);
    assert.match(result.stdout, /^warning +gate extra:/m, 'an optional gate is a warning');
    assert.match(result.stdout, /3 things a run needs are missing/);
  });

  it('names the agent CLI of agent.kind: found where it is, or missing with how to install it; its model endpoint is then not needed', async () => {
    await configure({
      agent: { kind: 'codex', command: '/nonexistent/codex' },
      llm: { apiKeyEnv: 'RALPH_DOCTOR_ABSENT_KEY', models: ['m'] },
    });
    const missing = await runCli(['doctor'], ws.dir);
    assert.equal(missing.code, 1, missing.stdout);
    assert.match(
      missing.stdout,
      /^MISSING +agent Codex: .*agent\.command "\/nonexistent\/codex" was not found.*\n\s+fix: npm install -g @openai\/codex/m,
    );
    assert.match(missing.stdout, /^warning +model endpoint \(m\)/m, "the built-in agent's model is only a warning");
    await configure({ agent: { kind: 'claude-code', command: process.execPath } });
    const found = await runCli(['doctor', '--json'], ws.dir);
    const { checks } = JSON.parse(found.stdout) as { checks: { name: string; ok: boolean; detail: string }[] };
    const agents = checks.filter((c) => c.name.startsWith('agent'));
    assert.deepEqual(
      agents.map((c) => [c.name, c.ok]),
      [['agent Claude Code', true]],
    );
    // where it is, and whether Ralph's sandbox confines it (where bubblewrap works)
    assert.ok(agents[0].detail.startsWith(`${process.execPath}; `), agents[0].detail);
    if (process.platform === 'linux' && (await probeSandbox()).available)
      assert.match(
        agents[0].detail,
        /Claude Code runs in Ralph's sandbox \(bubblewrap\): it writes only the task's folder \(not \.ralph\/\)/,
      );
    await configure({ agent: { kind: 'claude-code', command: process.execPath }, commands: { sandbox: 'off' } });
    const off = JSON.parse((await runCli(['doctor', '--json'], ws.dir)).stdout) as { checks: { name: string; detail: string }[] };
    assert.match(
      off.checks.find((c) => c.name === 'agent Claude Code')!.detail,
      /Claude Code runs without Ralph's sandbox \(commands\.sandbox is "off"\)/,
    );
    // a CLI the escalation ladder names is checked too, found on PATH by its usual name (agent.command is Claude Code's)
    await configure({
      agent: { kind: 'claude-code', command: process.execPath },
      escalation: { ladder: [{ agent: 'claude-code' }, { agent: 'opencode', model: 'a/b' }] },
    });
    const ladder = await runCli(['doctor', '--json'], ws.dir, { ...CLI_ENV, PATH: bare });
    const laddered = (JSON.parse(ladder.stdout) as { checks: { name: string; ok: boolean; detail: string }[] }).checks;
    assert.deepEqual(
      laddered.filter((c) => c.name.startsWith('agent')).map((c) => [c.name, c.ok]),
      [
        ['agent Claude Code', true],
        ['agent OpenCode', false],
      ],
    );
    assert.match(laddered.find((c) => c.name === 'agent OpenCode')!.detail, /"opencode" is not on PATH/);
  });

  it('ralph run says on stderr, at its start, that commands run without a sandbox and how to get one', async function () {
    if (process.platform !== 'linux') this.skip();
    const none = await runCli(['run'], ws.dir, { ...CLI_ENV, PATH: bare });
    assert.match(
      none.stderr,
      /ralph: warning: no sandbox here \(bubblewrap \(bwrap\) not found.*To confine them, install bubblewrap: sudo /s,
    );
    await configure({ commands: { sandbox: 'off' } });
    const off = await runCli(['run'], ws.dir);
    assert.match(off.stderr, /ralph: warning: commands\.sandbox is "off": the agent's commands and the gates run with your user's rights/);
  });

  it('gives the install command of the distribution, and the namespace fix when bubblewrap is there but cannot run', () => {
    assert.equal(bubblewrapInstall(osReleaseIds('ID=fedora\n')), 'sudo dnf install bubblewrap');
    assert.equal(bubblewrapInstall(osReleaseIds('ID=linuxmint\nID_LIKE="ubuntu debian"\n')), 'sudo apt-get install bubblewrap');
    assert.equal(bubblewrapInstall(osReleaseIds('ID=arch\n')), 'sudo pacman -S bubblewrap');
    const broken = sandboxAdvice(
      { available: false, reason: 'bubblewrap fails here (exit 1): … — user namespaces may be disabled' },
      'linux',
    );
    assert.equal(broken.install, undefined);
    assert.match(broken.fix, /user namespaces/);
    assert.match(sandboxAdvice({ available: false, reason: 'no sandbox on win32' }, 'win32').fix, /WSL 2/);
  });
});
