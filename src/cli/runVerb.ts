/**
 * `ralph run`: the one verb that needs the whole loop (the runner, the models, the agent CLIs,
 * the sandbox). main.ts loads it only for a run, so the other verbs start without it.
 */
import { adapterOf, checkAgentsFound, type RalphCliCommand } from '../core/agentCli/port';
import { cliSandboxDecision, cliSandboxLine, type SandboxMode } from '../core/agentCli/cliSandbox';
import type { CliAgentKind } from '../core/agentKinds';
import { ladderOfConfig } from '../core/escalation/steps';
import { EventBus } from '../core/events';
import { cliModels } from './cliModels';
import type { RunSummary } from '../core/loop/run/runner';
import { openRalph, type PreparedRun, type Ralph, type RunParts } from '../core/ralph';
import type { RunLock } from '../core/loop/run/runLock';
import { startGitHost, stopGitHost } from '../core/git/gitHost';
import { NodeCommandRunner } from '../core/commands/processRunner';
import type { RunSpendSummary } from '../core/spend/receipt';
import { describeLine } from '../core/spend/receiptFormat';
import { formatUsd } from '../core/llm/pricing';
import type { CliCommand } from './args';
import { cliApproval, cliSafeguards } from './approvals';
import type { RunHooks } from './ciRun';
import { CODE_CACHE_ENV, codeCacheDir } from './codeCache';
import { EXIT, exitCodeFor } from './exitCodes';
import type { CliIo } from './io';
import { runOutcomeText } from './personStatus';
import { noSandboxWarning } from '../core/commands/sandboxAdvice';
import { probeSandbox } from '../core/commands/sandbox';
import { formatEvent } from '../core/eventFormat';

/** `ralph run` on the workspace `command.workspace` (an existing folder), or `ralph run --ci` (whose forge modules load only then). */
export async function runCommand(command: Extract<CliCommand, { kind: 'run' }>, io: CliIo): Promise<number> {
  const ralph = openRalph(command.workspace);
  try {
    if (command.ci === true || (command.taskId !== undefined && process.env.GITHUB_ACTIONS === 'true')) {
      const { isCiRun, runCiCommand } = await import('./ciRun.js');
      if (isCiRun(command)) return await runCiCommand(ralph, command, io, (hooks: RunHooks) => run(ralph, command, io, hooks));
    }
    return await run(ralph, command, io);
  } finally {
    // the run's git helper ends with the run: `ralph run` exits with no process of its own left behind
    await stopGitHost();
  }
}

/**
 * Said at once on stderr, not only in the run's log (a person acts on it before the agent runs
 * anything): commands without a sandbox, and whether each agent CLI of the run is confined.
 */
async function saySandbox(sandbox: SandboxMode, clis: readonly CliAgentKind[], io: CliIo): Promise<void> {
  if (sandbox !== 'required') {
    const probe = await probeSandbox();
    if (sandbox === 'off' || !probe.available) io.err(`ralph: warning: ${noSandboxWarning(probe, sandbox)}`);
  }
  for (const kind of clis) await sayCliSandbox(kind, sandbox, io);
}

/** Whether the agent CLI `kind` runs in Ralph's sandbox: one line on stderr (a warning when it does not). */
async function sayCliSandbox(kind: CliAgentKind, mode: SandboxMode, io: CliIo): Promise<void> {
  const adapter = adapterOf(kind);
  try {
    const decision = cliSandboxDecision(adapter, mode, await probeSandbox());
    io.err(`ralph: ${decision.wrapped ? '' : 'warning: '}${cliSandboxLine(adapter, decision)}`);
  } catch {
    // "required" and no sandbox: the run refuses before the CLI starts, with its own message
  }
}

async function run(ralph: Ralph, command: Extract<CliCommand, { kind: 'run' }>, io: CliIo, hooks?: RunHooks): Promise<number> {
  const { taskId, json } = command;
  const { paths } = ralph;
  const loaded = await ralph.config.load();
  const adjusted = hooks ? hooks.config(loaded) : loaded;
  const bus = new EventBus();
  // nobody to ask (--unattended, CI, no terminal): no question is put and no wait is for a person
  const unattended = command.unattended === true || io.unattended !== undefined || !io.confirm;
  const asking: CliIo = unattended ? { ...io, confirm: undefined, ask: undefined } : io;
  // a configured agent CLI that is not there: exit 2 before anything changes
  const clis = checkAgentsFound(await ralph.store.list(), adjusted.agent, command.agent, process.env, ladderOfConfig(adjusted));
  // the run lock before anything is started: a second run on a busy workspace is refused at once
  const lock = await ralph.takeRunLock(command.force === true);
  // the run's git calls go through the helper from here (see gitHostWhenAsked); a refused start never starts it
  startGitHost();
  const { runner, config, dispose } = await prepare(ralph, lock, {
    config: adjusted,
    models: cliModels(paths.config, 'run the task from the Ralph Loop extension'),
    bus,
    commands: new NodeCommandRunner(),
    secretValues: hooks?.secretValues ?? [],
    ...(hooks?.awaitMerge ? { awaitMerge: true } : {}),
    approval: cliApproval({ actions: command.yes, commands: command.approveCommands }, asking),
    safeguards: cliSafeguards(adjusted.safeguards.onWarning, asking),
    unattended,
    agentCli: { ...(command.agent ? { override: command.agent } : {}), ralph: ralphCliCommand() },
  });
  hooks?.onBus(bus);
  await saySandbox(config.commands.sandbox, clis, io);
  bus.subscribe((event) => {
    if (json) {
      if (event.type !== 'model.delta') io.out(JSON.stringify(event));
      return;
    }
    const line = formatEvent(event, { taskPrefix: config.loop.maxParallel > 1 });
    if (line) io.out(line);
  });
  let interrupts = 0;
  const removeInterrupt = io.onInterrupt(() => {
    interrupts++;
    if (interrupts === 1) {
      io.err('stopping: the current iteration ends and state is saved (Ctrl-C again to quit at once)');
      runner.stop();
    } else {
      process.exit(130);
    }
  });
  let summary: RunSummary;
  try {
    summary = await runner.run({ taskId, lock });
  } finally {
    removeInterrupt();
    dispose();
  }
  if (!json) {
    for (const result of summary.results) {
      if (result.reportFile) io.out(`report for ${result.taskId}: ${paths.relative(result.reportFile)}`);
    }
    if (summary.spend) io.out(runSpendText(summary.spend));
    io.out(`run log: ${paths.relative(summary.logFile)}`);
    for (const result of summary.results.filter((r) => r.status === 'halted')) {
      io.out(`resume ${result.taskId} with: ralph run --task ${result.taskId} (or ralph run: a Start resumes it)`);
    }
    if (summary.outcome) io.out(runOutcomeText(summary.outcome, await ralph.store.list().catch(() => [])));
  }
  // human output already showed them as warnings; JSON consumers read stderr for the summary
  if (json)
    for (const block of summary.unrunnable)
      io.err(`ralph: ${block.taskId} can never start: ${block.message}; fix its dependsOn in .ralph/tasks.json`);
  if (summary.halted) io.err(`ralph: the run halted: ${summary.halted}`);
  const code = summary.halted
    ? EXIT.failed
    : exitCodeFor(
        summary.results.map((r) => r.status),
        summary.outcome?.landing?.length ?? 0,
      );
  // tasks that no run can ever start are bad input in the store, like an invalid tasks.json
  return code === EXIT.ok && summary.unrunnable.length > 0 ? EXIT.usage : code;
}

/** `ralph.prepareRun` while `lock` is held for the run; the lock is released when the run cannot be prepared. */
async function prepare(ralph: Ralph, lock: RunLock, parts: RunParts): Promise<PreparedRun> {
  try {
    return await ralph.prepareRun(parts);
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/** The CLI summary's spend lines: the run's total, then each task's. */
export function runSpendText(spend: RunSpendSummary): string {
  const lines = [`spent this run: ${describeLine(spend.total)} (against the budget: ${formatUsd(spend.costUsd)})`];
  for (const [taskId, line] of Object.entries(spend.byTask)) lines.push(`  ${taskId}: ${describeLine(line)}`);
  return lines.join('\n');
}

/** How an agent CLI's session starts this CLI (`mcp`, `hook pre-tool-use`): the same Node and script as this process. */
function ralphCliCommand(): RalphCliCommand {
  // this process's code cache folder (or "off"): an agent CLI may start them with another HOME, or in a sandbox
  const cache = codeCacheDir(process.env) ?? 'off';
  return {
    command: process.execPath,
    args: [...process.execArgv.filter((a) => !a.startsWith('--inspect')), process.argv[1]],
    env: { [CODE_CACHE_ENV]: cache },
  };
}
