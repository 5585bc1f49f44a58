import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ConfigError, errorMessage, LockError, RalphError } from '../core/errors';
import { gitHostWhenAsked } from '../core/git/gitHostMode';
import { type CliCommand, parseCli, UsageError } from './args';
import { helpCommand } from './completion';
import { EXIT } from './exitCodes';
import { optionsOf, usageLine } from './help';
import type { CliIo } from './io';
import { setProcessFlags } from './processFlags';
import { askLine, askOnTerminal, nobodyToAsk } from './terminal';
import { closest, verbOf } from './verbs';

// Only what parsing and every verb need is imported here: each verb's own modules (the core for
// `task add`, the whole loop for `run`, the MCP server for `mcp`) load when that verb runs, so a
// short verb (`--version`, `mcp`, `hook`) starts without them.
export { cliApproval, cliSafeguards } from './approvals';
export { EXIT, exitCodeFor } from './exitCodes';
export type { CliIo };
/** What the entry point sets before `main` (short verbs start git directly): for a caller of `main` in a process of its own making. */
export { gitHostWhenAsked };

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
      const { openRalph } = await import('../core/ralph.js');
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
      const { openRalph } = await import('../core/ralph.js');
      const { formatTaskTable } = await import('../core/eventFormat.js');
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
      return (await import('./runVerb.js')).runCommand({ ...command, workspace: await existingDir(command.workspace) }, io);
    case 'gate':
    case 'ci.init':
    case 'remote.run':
    case 'remote.status':
      return (await import('./forgeCommands.js')).runForgeCommand(command, io);
    case 'mcp': {
      const { SIGNAL_FILE_ENV } = await import('../core/agentCli/signalFile.js');
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

/** `ralph hook pre-tool-use|pre-compact`: an agent CLI's hook; exit 2 blocks the tool call, with the reason on stderr. */
async function runHook(event: 'pre-tool-use' | 'pre-compact', io: CliIo): Promise<number> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const { preCompactHook, preToolUseHook } = await import('../core/agentCli/hookGate.js');
  const hook = event === 'pre-compact' ? preCompactHook : preToolUseHook;
  const { code, stderr, stdout } = await hook(Buffer.concat(chunks).toString('utf8'), process.env);
  if (stdout) io.out(stdout);
  if (stderr) io.err(stderr);
  return code;
}

async function writeSchemas(out: string, io: CliIo): Promise<number> {
  const { configJsonSchema, tasksJsonSchema } = await import('../core/config/jsonSchema.js');
  const { writeJsonAtomic } = await import('../core/util/atomicWrite.js');
  await writeJsonAtomic(path.join(out, 'config.schema.json'), configJsonSchema());
  await writeJsonAtomic(path.join(out, 'tasks.schema.json'), tasksJsonSchema());
  io.out(`wrote ${path.join(out, 'config.schema.json')} and tasks.schema.json`);
  return EXIT.ok;
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

async function existingDir(dir: string): Promise<string> {
  const resolved = path.resolve(dir);
  const stat = await fs.stat(resolved).catch(() => undefined);
  if (!stat?.isDirectory()) throw new UsageError(`workspace "${dir}" is not a directory`);
  return resolved;
}

/**
 * The CLI as its own process: stdio, signals, the exit code. The launcher (launcher.ts, dist/cli.js)
 * calls it after loading this bundle; run on its own (`node dist/cliMain.js`), the bundle calls it itself.
 */
export function runAsProcess(): void {
  setProcessFlags();
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

if (require.main === module) runAsProcess();
