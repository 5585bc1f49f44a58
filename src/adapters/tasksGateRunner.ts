import * as vscode from 'vscode';
import type { GateConfig } from '../core/config/schema';
import type { GateRunner, GateRunRequest, GateRunResult } from '../core/gates/types';
import type { CommandRunner } from '../core/commands/processRunner';
import { gateCommand, runEnvironment, type RunEnvironment } from '../core/gates/runGates';

/** The task type contributed in package.json (`taskDefinitions`). */
export const RALPH_TASK_TYPE = 'ralph';

export interface RalphTaskDefinition extends vscode.TaskDefinition {
  type: typeof RALPH_TASK_TYPE;
  /** The gate's name in `.ralph/config.json`. */
  gate: string;
  /**
   * The run number. It is declared in package.json's `taskDefinitions`: VS Code builds a task's
   * identity from the declared properties only, and allows one running instance per identity —
   * without it, concurrent runs of one gate (parallel agents) made VS Code prompt "Select an
   * instance to terminate" and the run hung.
   */
  run?: number;
}

/**
 * Runs each gate as a VS Code task: a CustomExecution whose pseudoterminal runs the gate's
 * process, shows its output live in the terminal panel, captures it and reports the exit code.
 */
export class TasksApiGateRunner implements GateRunner {
  private runs = 0;
  /** When the last run of each gate ended as a VS Code task. */
  private readonly previousEnd = new Map<string, Promise<void>>();

  constructor(
    private readonly folder: vscode.WorkspaceFolder,
    private readonly commands: CommandRunner,
  ) {}

  async run(request: GateRunRequest): Promise<GateRunResult> {
    let settle!: (result: GateRunResult) => void;
    const finished = new Promise<GateRunResult>((resolve) => (settle = resolve));
    // the request's cwd, not the folder: a parallel task's gates run in its worktree, the queue's in its merge worktree
    // VS Code runs one task per definition at a time (and a gate's terminal outlives its process a
    // little): parallel agents and the merge queue run the same gate at once, so each run is its own task
    const definition = { type: RALPH_TASK_TYPE, gate: request.gate.name, run: ++this.runs };
    const task = createGateTask(
      this.folder,
      request.gate,
      this.commands,
      {
        cwd: request.cwd,
        timeoutMs: request.timeoutMs,
        signal: request.signal,
        onOutput: request.onOutput,
        onFinished: settle,
        environment: runEnvironment(request),
      },
      definition,
    );
    // VS Code asks "Select an instance to terminate" when a gate starts while its previous run's
    // task has not ended yet (its terminal closes a little after the process): wait for that end
    await this.previousEnd.get(request.gate.name);
    const ended = new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), 15_000); // never wait forever on an event that does not come
      const listener = vscode.tasks.onDidEndTask((e) => {
        const d = e.execution.task.definition;
        if (d.type === RALPH_TASK_TYPE && d.gate === definition.gate && d.run === definition.run) done();
      });
      function done(): void {
        clearTimeout(timer);
        listener.dispose();
        resolve();
      }
    });
    this.previousEnd.set(request.gate.name, ended);
    const execution = await vscode.tasks.executeTask(task);
    const onAbort = () => execution.terminate();
    request.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await finished;
    } finally {
      request.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The gate's process starts as the CLI's does (`gateCommand`), in this pseudoterminal: the run's gate cache may share it. */
  environment(request: GateRunRequest): Promise<string | undefined> {
    return this.commands.environmentOf?.(gateCommand(request)) ?? Promise.resolve(undefined);
  }
}

interface GateTaskOptions {
  /** Where the gate's command runs; default: the workspace folder. */
  cwd?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  onOutput?: (chunk: string) => void;
  onFinished?: (result: GateRunResult) => void;
  /** The run's own variables and writable folders (the test probe's: `runEnvironment`). */
  environment?: RunEnvironment;
}

export function createGateTask(
  folder: vscode.WorkspaceFolder,
  gate: GateConfig,
  commands: CommandRunner,
  options: GateTaskOptions,
  definition: vscode.TaskDefinition = { type: RALPH_TASK_TYPE, gate: gate.name } satisfies RalphTaskDefinition,
): vscode.Task {
  const task = new vscode.Task(
    definition,
    folder,
    `gate: ${gate.name}`,
    'ralph',
    new vscode.CustomExecution(async () => new GatePseudoterminal(gate, options.cwd ?? folder.uri.fsPath, commands, options)),
    [],
  );
  task.detail = gate.command;
  task.group = gate.kind === 'tests' ? vscode.TaskGroup.Test : vscode.TaskGroup.Build;
  task.presentationOptions = {
    reveal: vscode.TaskRevealKind.Silent,
    panel: vscode.TaskPanelKind.Dedicated,
    clear: true,
    showReuseMessage: false,
  };
  return task;
}

const MIN_TERMINAL_LIFETIME_MS = 700;

/** A terminal that runs one gate's command and closes with its exit code. */
class GatePseudoterminal implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly closeEmitter = new vscode.EventEmitter<number>();
  private readonly abort = new AbortController();
  private openedAt = 0;
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;

  constructor(
    private readonly gate: GateConfig,
    private readonly cwd: string,
    private readonly commands: CommandRunner,
    private readonly options: GateTaskOptions,
  ) {}

  open(): void {
    this.openedAt = Date.now();
    void this.execute();
  }

  close(): void {
    this.abort.abort();
  }

  private async execute(): Promise<void> {
    this.write(`\x1b[1m> ${this.gate.command}\x1b[0m\n`);
    const signal = this.options.signal ? AbortSignal.any([this.abort.signal, this.options.signal]) : this.abort.signal;
    let result: GateRunResult;
    try {
      const run = await this.commands.run({
        ...gateCommand({ gate: this.gate, cwd: this.cwd, timeoutMs: this.options.timeoutMs, ...this.options.environment }),
        signal,
        onOutput: (chunk) => {
          this.write(chunk);
          this.options.onOutput?.(chunk);
        },
      });
      result = { exitCode: run.exitCode, timedOut: run.timedOut, aborted: run.aborted, output: run.output, durationMs: run.durationMs };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.write(`\n${message}\n`);
      result = { exitCode: null, timedOut: false, aborted: false, output: message, durationMs: 0 };
    }
    const how = result.timedOut
      ? `timed out after ${Math.round(result.durationMs / 1000)}s`
      : result.aborted
        ? 'stopped'
        : `exit code ${result.exitCode}`;
    this.write(`\n\x1b[2m[ralph] ${this.gate.name}: ${how}\x1b[0m\n`);
    this.options.onFinished?.(result);
    // VS Code reports a terminal that ends within its launch window (500 ms) as having "failed to
    // launch"; a fast gate closes a little later so its terminal says what really happened
    const launchWindowLeft = this.openedAt + MIN_TERMINAL_LIFETIME_MS - Date.now();
    if (launchWindowLeft > 0) await new Promise((resolve) => setTimeout(resolve, launchWindowLeft));
    this.closeEmitter.fire(result.exitCode ?? 1);
  }

  private write(text: string): void {
    this.writeEmitter.fire(text.replace(/\r?\n/g, '\r\n'));
  }
}

/** Offers every configured gate under *Run Task* → ralph. */
export class GateTaskProvider implements vscode.TaskProvider {
  constructor(
    private readonly folder: vscode.WorkspaceFolder,
    private readonly commands: CommandRunner,
    private readonly gates: () => Promise<readonly GateConfig[]>,
  ) {}

  async provideTasks(): Promise<vscode.Task[]> {
    const gates = await this.gates().catch(() => []);
    return gates.map((gate) => createGateTask(this.folder, gate, this.commands, { timeoutMs: gate.timeoutMs ?? 10 * 60_000 }));
  }

  async resolveTask(task: vscode.Task): Promise<vscode.Task | undefined> {
    const definition = task.definition as RalphTaskDefinition;
    const gate = (await this.gates().catch(() => [])).find((g) => g.name === definition.gate);
    if (!gate) return undefined;
    // VS Code requires the resolved task to carry the very definition it was asked about
    return createGateTask(this.folder, gate, this.commands, { timeoutMs: gate.timeoutMs ?? 10 * 60_000 }, task.definition);
  }
}
