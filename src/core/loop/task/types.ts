import type { ToolRegistry } from '../../agent/toolRegistry';
import type { AgentCliRunner } from '../../agentCli/port';
import type { RalphConfig } from '../../config/schema';
import type { ModelFaultKind } from '../../errors';
import type { RalphEventBody } from '../../events';
import type { GateRunner } from '../../gates/types';
import type { GitService } from '../../git/gitService';
import type { ModelClient } from '../../llm/types';
import type { RalphPaths } from '../../paths';
import type { Clock, Logger, SafeguardPrompt } from '../../ports';
import type { SpendMeter } from '../../spend/budget';
import type { AskedQuestion, CommandQuestions } from '../../commands/commandQuestions';
import type { ControlFileGuard } from '../../guards/controlFileGuard';
import type { CommandRunner } from '../../commands/processRunner';
import type { WorkspaceScope } from '../../guards/workspaceScope';
import type { TaskStatus } from '../../tasks/schema';
import type { TaskStore } from '../../tasks/store';
import type { CheckpointStore } from '../../record/checkpoint';
import type { PauseGate } from '../person/pauseGate';
import type { DiskBudget } from '../../reports/diskBudget';

/**
 * The types of the per-task loop and its steps. Each step names the services it uses
 * (`Pick<TaskLoopServices, …>`), so a step's dependencies read off its signature.
 */

export interface TaskLoopServices {
  runId: string;
  paths: RalphPaths;
  config: RalphConfig;
  store: TaskStore;
  checkpoints: CheckpointStore;
  git: GitService;
  model: ModelClient;
  registry: ToolRegistry;
  commands: CommandRunner;
  gates: GateRunner;
  /** The run of the gates at the task's base beside its first iteration (`AsideBaseline`): a guard of its own, since the loop writes the task's checkpoint meanwhile (default: `gates`). */
  baseGates?: GateRunner;
  scope: WorkspaceScope;
  clock: Clock;
  logger: Logger;
  emit(body: RalphEventBody): void;
  /** Meters every model call (per model, per task, per run) and enforces the budgets. */
  meter: SpendMeter;
  /** Answers safeguard warnings (Continue / Stop / Increase max). */
  safeguards: SafeguardPrompt;
  /** Puts back `.ralph/` control files and git's config/hooks that an agent's command or a gate changed. */
  guard: ControlFileGuard;
  /** Pause/Resume: waited on between iterations (and between the steps of one). */
  pause?: PauseGate;
  /**
   * A parallel run's task works in its own worktree: its progress notes and gates live there
   * (`git`, `scope` and the commands' cwd are made for that root too), while `paths` keeps
   * the state (store, checkpoints, reports, run log) in the main workspace. Absent: `paths`.
   */
  work?: RalphPaths;
  /** COMPLETE is not `done` yet: the task stays in_progress until the merge queue lands it. */
  awaitingMerge?: boolean;
  /** `merge.checkAhead`: the merge queue checks the task's merged result while its own gates run. */
  checkAhead?: CheckAhead;
  /** A parallel run's agent slot: given away while the task's gates run, taken back before its next model conversation. */
  slot?: AgentSlot;
  /** Gated commands nobody could approve during the run: kept as the task's question (needs_help). */
  commandQuestions?: CommandQuestions;
  /** The run's agent CLIs (issue 46): a task whose agent is not the built-in one works through one session of its CLI per iteration. */
  agentCli?: AgentCliRunner;
  /** Keeps `.ralph/reports/` and `.ralph/runs/` within `reports.maxTotalMb` (looked at every few iterations and at the task's end). */
  disk?: DiskBudget;
}

export type { AskedQuestion };

/**
 * The merge queue's side of a COMPLETE whose gates have not passed yet: `claim` as the gates
 * start (the queue builds and checks the merged result meanwhile, deciding nothing), `drop`
 * when the loop does not accept it (the queue takes the check back). A COMPLETE the loop
 * accepts ends the task's run, and the autopilot confirms the claim then.
 */
export interface CheckAhead {
  claim(taskId: string, title: string): void;
  drop(taskId: string, why: string): void;
}

/**
 * The agent slot a task's loop holds in a parallel run (issue 34): a slot is a model conversation.
 * The loop gives it away as its gates start (the proof and the iteration's end follow without
 * it), and takes it back before its next conversation or a bug council; the autopilot gives a
 * task sent back by its gates the next free slot, before any new task starts.
 */
export interface AgentSlot {
  /** The conversation and commit are over, the gates start: the slot goes to the next task meanwhile. */
  release(): void;
  /** Resolves once the task holds a slot again, or at once when `stop` fires; true when it had to wait. */
  take(stop: AbortSignal): Promise<boolean>;
}

export interface TaskRunResult {
  taskId: string;
  status: TaskStatus;
  reason: string;
  iterations: number;
  reportFile?: string;
  /** The provider fault that halted the task (auth, quota): every later task of the run would meet it too. */
  fault?: ModelFaultKind;
  /** Why the whole run must stop after this task (a git lock held in the working tree every task shares). */
  runHalt?: string;
  /** Halted on a critical security finding: the run asks a person before it starts another task. */
  critical?: boolean;
  /**
   * Checked, but its landing ended because the person's own files were in the way and nobody was
   * there to move them (an unattended run): the files. The task stays in_progress and the next run lands it.
   */
  waitsToLand?: string[];
}
