import type { AgentKind } from '../core/agentKinds';
import type { EditFields } from '../core/tasks/actionRules';
import type { ProofKind, TaskType } from '../core/tasks/schema';

/** The shells `ralph completion` writes a script for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** A mistake in how the command was called: exit code 2 with usage. */
export class UsageError extends Error {}

/** `ralph task <action> <id>`: the recovery actions of the extension's task menu (--yes is accepted by all, for scripts). */
export const TASK_ACTIONS = ['retry', 'unblock', 'cancel', 'edit', 'increase-max', 'delete', 'rollback', 'cleanup'] as const;
export type TaskActionVerb = (typeof TASK_ACTIONS)[number];

/** Actions that lose something (a task, commits' effects): confirmed on a terminal, or --yes. */
export const DESTRUCTIVE: ReadonlySet<TaskActionVerb> = new Set(['delete', 'rollback']);

export interface TaskActionCommand {
  kind: 'task.action';
  workspace: string;
  action: TaskActionVerb;
  taskId: string;
  yes: boolean;
  /** Print the result as JSON. */
  json?: boolean;
  /** edit: the fields to change. */
  fields?: EditFields;
  /** increase-max: by how many iterations (or minutes). */
  by?: number;
  /** increase-max: raise the time limit (minutes) rather than whichever ended the task. */
  minutes?: boolean;
  /** retry: drop the kept worktree and start from the current tip. */
  fresh?: boolean;
}

/** The person's verbs (DESIGN §7): `ralph task answer`, `ralph task council` and `ralph review list|diff|approve|changes|reject`. */
export type PersonCommand =
  | {
      kind: 'task.answer';
      workspace: string;
      taskId: string;
      text?: string;
      approved?: boolean;
      verdict?: 'part' | 'unrelated';
      json?: boolean;
    }
  | { kind: 'task.council'; workspace: string; taskId: string; note?: string; json?: boolean }
  | { kind: 'review.list'; workspace: string; json: boolean }
  | { kind: 'review.diff'; workspace: string; taskId: string; stat: boolean }
  | { kind: 'review.approve'; workspace: string; taskId: string; json?: boolean }
  | { kind: 'review.changes'; workspace: string; taskId: string; text: string; json?: boolean }
  | { kind: 'review.reject'; workspace: string; taskId: string; yes: boolean; json?: boolean };

/** `ralph gate`, `ralph ci init`, `ralph remote run|status`: the verbs of running tasks on the forge. */
export type ForgeCommand =
  | { kind: 'gate'; workspace: string; base?: string; taskId?: string; json: boolean }
  | { kind: 'ci.init'; workspace: string; force: boolean; runsOn?: string; maxParallel?: number; node?: string; json?: boolean }
  | { kind: 'remote.run'; workspace: string; tasks?: string[]; detach: boolean; json: boolean }
  | { kind: 'remote.status'; workspace: string; json: boolean };

export interface PlanCommand {
  kind: 'plan';
  workspace: string;
  document?: string;
  section?: string;
  accept?: string;
  yes: boolean;
  json: boolean;
}

export interface ImportCommand {
  kind: 'task.import';
  workspace: string;
  repo: { owner: string; repo: string };
  labels: string[];
  milestone?: string;
  dryRun: boolean;
  json: boolean;
}

export interface TaskAddCommand {
  kind: 'task.add';
  workspace: string;
  title: string;
  prompt: string;
  promise: string;
  maxIterations?: number;
  priority?: number;
  dependsOn: string[];
  type?: TaskType;
  complexity?: number;
  allowGateChanges?: true | string[];
  review?: 'auto' | 'manual';
  check?: string;
  proof?: ProofKind;
  proofTests?: string[];
  knownFailures?: string[];
  agent?: AgentKind;
  json?: boolean;
}

export interface RunCommand {
  kind: 'run';
  workspace: string;
  taskId?: string;
  json: boolean;
  yes: boolean;
  approveCommands: boolean;
  force: boolean;
  ci?: boolean;
  unattended?: boolean;
  agent?: AgentKind;
}

/** What the command line asks for, parsed and checked (src/cli/args.ts). */
export type CliCommand =
  | { kind: 'help'; verb?: string }
  | { kind: 'completion'; shell: Shell }
  /** `ralph __complete <words…>`: what the completion scripts ask (the candidates for the last word). */
  | { kind: 'complete'; workspace: string; words: string[] }
  | { kind: 'version' }
  | { kind: 'init'; workspace: string; json?: boolean }
  | TaskAddCommand
  | { kind: 'task.list'; workspace: string; json: boolean }
  | RunCommand
  | { kind: 'status'; workspace: string; json: boolean }
  | { kind: 'doctor'; workspace: string; json: boolean }
  | { kind: 'schema'; workspace: string; out: string; json?: boolean }
  | { kind: 'mcp' }
  | { kind: 'hook'; event: 'pre-tool-use' | 'pre-compact' }
  | TaskActionCommand
  | ForgeCommand
  | PersonCommand
  | PlanCommand
  | ImportCommand;
