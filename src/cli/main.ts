import { adapterOf, checkAgentsFound, type RalphCliCommand } from '../core/agentCli/port';
import { cliSandboxDecision, cliSandboxLine, type SandboxMode } from '../core/agentCli/cliSandbox';
import type { CliAgentKind } from '../core/agentKinds';
import { ladderOfConfig } from '../core/escalation/steps';
import { SIGNAL_FILE_ENV } from '../core/agentCli/signalFile';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { ConfigError, errorMessage, LockError, RalphError } from '../core/errors';
import { EventBus } from '../core/events';
import { cliModels } from './cliModels';
import type { RunSummary } from '../core/loop/run/runner';
import { openRalph, type PreparedRun, type Ralph, type RunParts } from '../core/ralph';
import type { RunLock } from '../core/loop/run/runLock';
import { gitHostWhenAsked, startGitHost } from '../core/git/gitHost';
import { NodeCommandRunner } from '../core/commands/processRunner';
import type { RunSpendSummary } from '../core/spend/receipt';
import { describeLine } from '../core/spend/receiptFormat';
import { formatUsd } from '../core/llm/pricing';
import type { TaskStatus } from '../core/tasks/schema';
import { writeJsonAtomic } from '../core/util/atomicWrite';
import { type CliCommand, parseCli, UsageError } from './args';
import { helpCommand } from './completion';
import { optionsOf, usageLine } from './help';
import { closest, verbOf } from './verbs';
import { cliApproval, cliSafeguards } from './approvals';
import type { RunHooks } from './ciRun';
import { runOutcomeText } from './personStatus';
import { askLine, askOnTerminal, nobodyToAsk } from './terminal';
import { noSandboxWarning } from '../core/commands/sandboxAdvice';
import { probeSandbox } from '../core/commands/sandbox';

export { cliApproval, cliSafeguards };
/** What the entry point below sets before `main` (short verbs start git directly): for a caller of `main` in a process of its own making. */
export { gitHostWhenAsked };
import { formatEvent, formatTaskTable } from '../core/eventFormat';

export const EXIT = { ok: 0, failed: 1, usage: 2, attention: 3 } as const;

import type { CliIo } from './io';

export type { CliIo };

const VERSION = '0.1.0';

/** Errors of how the command was used or of the workspace it was pointed at: exit 2. */
const USAGE_ERROR_CODES: ReadonlySet<string> = new Set([
  'task-not-found',
  'not-startable',
  'dependencies-pending',
  'not-a-repo',
  'invalid-task',
  'duplicate-task',
  'unknown-dependency',
  'sandbox-unavailable',
  'forge-token',
  'not-published',
  'bad-base',
  'dirty-checkout',
  'plan-document',
  'plan-section',
  'plan-too-large',
  'agent-missing',
]);

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let command: CliCommand;
  try {
    command = parseCli(argv, io.cwd);
  } catch (error) {
    if (error instanceof UsageError) {
      // node's parser adds how to pass a positional that starts with '-': not what was wrong
      const message = error.message.replace(/\. To specify a positional argument[\s\S]*$/, '');
      io.err(`ralph: ${message}\n\n${usageFor(argv, message)}`);
      return EXIT.usage;
    }
    throw error;
  }
  try {
    return await execute(command, io);
  } catch (error) {
    io.err(`ralph: ${errorMessage(error)}`);
    if (error instanceof ConfigError || error instanceof LockError || error instanceof UsageError) return EXIT.usage;
    if (error instanceof RalphError && USAGE_ERROR_CODES.has(error.code)) {
      return EXIT.usage;
    }
    return EXIT.failed;
  }
}

async function execute(command: CliCommand, io: CliIo): Promise<number> {
  switch (command.kind) {
    case 'help':
    case 'completion':
    case 'complete':
      return helpCommand(command, io);
    case 'version':
      io.out(VERSION);
      return EXIT.ok;
    case 'init':
      return init(command, io);
    case 'task.add': {
      const task = await openRalph(await existingDir(command.workspace)).store.add({
        title: command.title,
        prompt: command.prompt,
        promise: command.promise,
        maxIterations: command.maxIterations,
        priority: command.priority,
        dependsOn: command.dependsOn,
        type: command.type,
        complexity: command.complexity,
        allowGateChanges: command.allowGateChanges,
        review: command.review,
        check: command.check,
        proof: command.proof,
        proofTests: command.proofTests,
        knownFailures: command.knownFailures,
        agent: command.agent,
      });
      io.out(command.json ? JSON.stringify(task, null, 2) : task.id);
      return EXIT.ok;
    }
    case 'task.list': {
      const tasks = await openRalph(await existingDir(command.workspace)).store.list();
      io.out(command.json ? JSON.stringify(tasks, null, 2) : formatTaskTable(tasks));
      return EXIT.ok;
    }
    case 'task.action':
      return (await import('./taskActions.js')).runTaskAction(command, io);
    case 'task.answer':
    case 'task.council':
    case 'review.list':
    case 'review.diff':
    case 'review.approve':
    case 'review.changes':
    case 'review.reject':
      return (await import('./personCommands.js')).runPersonCommand(command, io);
    case 'task.import':
      return (await import('./importCommand.js')).runImportCommand({ ...command, workspace: await existingDir(command.workspace) }, io);
    case 'plan':
      return (await import('./planCommand.js')).runPlanCommand({ ...command, workspace: await existingDir(command.workspace) }, io);
    case 'status':
      await (await import('./statusCommand.js')).printStatus(await existingDir(command.workspace), command.json, io);
      return EXIT.ok;
    case 'doctor':
      return (await import('./doctorCommand.js')).runDoctorCommand(await existingDir(command.workspace), command.json, io);
    case 'run':
      return runCommand(command, io);
    case 'gate':
    case 'ci.init':
    case 'remote.run':
    case 'remote.status':
      return (await import('./forgeCommands.js')).runForgeCommand(command, io);
    case 'mcp': {
      const { serveSignalsOverStdio } = await import('../core/agentCli/signalServer.js');
      return serveSignalsOverStdio(process.env[SIGNAL_FILE_ENV], VERSION).then(() => EXIT.ok);
    }
    case 'hook':
      return runHook(command.event, io);
    case 'schema':
      return writeSchemas(path.resolve(io.cwd, command.out), io);
  }
}

/** `ralph init [--json]`: .ralph/ (and a git repository if missing); what it made, in words or as JSON. */
async function init(command: Extract<CliCommand, { kind: 'init' }>, io: CliIo): Promise<number> {
  const workspace = await existingDir(command.workspace);
  const { initWorkspace } = await import('../core/init.js');
  const result = await initWorkspace(workspace);
  if (command.json) {
    io.out(JSON.stringify({ gitInitialized: result.gitInitialized, created: result.created }, null, 2));
    return EXIT.ok;
  }
  if (result.gitInitialized) io.out('initialized a git repository');
  for (const file of result.created) io.out(`created ${file}`);
  if (!result.gitInitialized && result.created.length === 0) io.out('already initialized; nothing to do');
  return EXIT.ok;
}

/** `ralph run`, or `ralph run --ci` (whose forge modules load only then). */
async function runCommand(command: Extract<CliCommand, { kind: 'run' }>, io: CliIo): Promise<number> {
  const ralph = openRalph(await existingDir(command.workspace));
  if (command.ci === true || (command.taskId !== undefined && process.env.GITHUB_ACTIONS === 'true')) {
    const { isCiRun, runCiCommand } = await import('./ciRun.js');
    if (isCiRun(command)) return runCiCommand(ralph, command, io, (hooks: RunHooks) => run(ralph, command, io, hooks));
  }
  return run(ralph, command, io);
}

/** `ralph hook pre-tool-use|pre-compact`: an agent CLI's hook; exit 2 blocks the tool call, with the reason on stderr. */
async function runHook(event: 'pre-tool-use' | 'pre-compact', io: CliIo): Promise<number> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const { preCompactHook, preToolUseHook } = await import('../core/agentCli/hookGate.js');
  const hook = event === 'pre-compact' ? preCompactHook : preToolUseHook;
  const { code, stderr } = await hook(Buffer.concat(chunks).toString('utf8'), process.env);
  if (stderr) io.err(stderr);
  return code;
}

async function writeSchemas(out: string, io: CliIo): Promise<number> {
  const { configJsonSchema, tasksJsonSchema } = await import('../core/config/jsonSchema.js');
  await writeJsonAtomic(path.join(out, 'config.schema.json'), configJsonSchema());
  await writeJsonAtomic(path.join(out, 'tasks.schema.json'), tasksJsonSchema());
  io.out(`wrote ${path.join(out, 'config.schema.json')} and tasks.schema.json`);
  return EXIT.ok;
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

/** The usage a mistake is shown with: the verb's (or the one it was closest to), else where to find the verbs. */
function usageFor(argv: readonly string[], message: string): string {
  const named = verbOf(argv);
  const meant = /did you mean `ralph ([^`]+)`/.exec(message)?.[1];
  const verb = named && 'verb' in named ? named.verb : meant;
  if (!verb) return "Run 'ralph --help' for the verbs.";
  // an option the verb does not have: the closest one it has
  const option = /Unknown option '(--[\w-]+)'/.exec(message)?.[1];
  const instead = option ? closest(option, optionsOf(verb)) : undefined;
  return `${instead ? `Did you mean ${instead}?\n` : ''}${usageLine(verb)}`;
}

/** 1 beats 3 beats 0: a failure is the more urgent news; a task waiting to land (`waitingToLand`) waits for the person, as a question does. */
export function exitCodeFor(statuses: readonly TaskStatus[], waitingToLand = 0): number {
  if (statuses.some((s) => s === 'failed' || s === 'timeout' || s === 'halted' || s === 'cancelled')) return EXIT.failed;
  if (waitingToLand > 0 || statuses.some((s) => s === 'blocked' || s === 'needs_help' || s === 'review')) return EXIT.attention;
  return EXIT.ok;
}

/** How an agent CLI's session starts this CLI (`mcp`, `hook pre-tool-use`): the same Node and script as this process. */
function ralphCliCommand(): RalphCliCommand {
  return { command: process.execPath, args: [...process.execArgv.filter((a) => !a.startsWith('--inspect')), process.argv[1]] };
}

async function existingDir(dir: string): Promise<string> {
  const resolved = path.resolve(dir);
  const stat = await fs.stat(resolved).catch(() => undefined);
  if (!stat?.isDirectory()) throw new UsageError(`workspace "${dir}" is not a directory`);
  return resolved;
}

if (require.main === module) {
  // Memory before speed where the two differ (a whole `ralph run` stays under 150 MB; bench/bigRun.ts).
  // The shell parser's wasm (the bash grammar, 1.3 MB) runs on V8's baseline compiler alone: its
  // tier-up to the optimizing compiler took 45 MB at its peak in every run and made parsing no
  // faster for commands this size (set before any wasm is compiled). The young generation keeps its
  // first size: a burst of short-lived strings (git's list of 100,000 new files) grew it to 32 MB
  // that stayed resident; more, smaller scavenges instead.
  setFlagsFromString('--liftoff-only');
  setFlagsFromString('--semi-space-growth-factor=1');
  // a verb other than run makes a few git calls from this small process: no git helper to start for them
  gitHostWhenAsked();
  const io: CliIo = {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    cwd: process.cwd(),
    confirm: process.stdin.isTTY ? askOnTerminal : undefined,
    ask: process.stdin.isTTY ? askLine : undefined,
    unattended: nobodyToAsk(process.env),
    onInterrupt(handler) {
      process.on('SIGINT', handler);
      process.on('SIGTERM', handler);
      return () => {
        process.off('SIGINT', handler);
        process.off('SIGTERM', handler);
      };
    },
  };
  main(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      process.stderr.write(`ralph: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = EXIT.failed;
    },
  );
}
