/** Ports through which the core reaches the outside; the extension and the CLI supply adapters. */
import { type SafeguardCode, WARNING_POLICY } from './warningPolicy';

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** Where API keys come from: SecretStorage in the extension, the environment in the CLI. */
export interface SecretSource {
  getApiKey(envName: string): Promise<string | undefined>;
  /** Where `getApiKey` finds the key now, named in authentication faults (never the key itself). */
  keySource?(envName: string): Promise<string>;
}

/**
 * What is to be approved: one of caio's actions (push, pull request, issue, notification), or
 * a command the agent wants to run that the command rules gate (force-push, `git reset --hard`,
 * every command in semi-auto mode…). The CLI approves them with separate flags.
 */
export type ApprovalKind = 'action' | 'command';

export interface ApprovalRequest {
  kind: ApprovalKind;
  title: string;
  detail: string;
}

/** Asks a human to approve an action; refuses when nobody can answer. */
export interface ApprovalPrompt {
  approve(request: ApprovalRequest): Promise<boolean>;
  /**
   * Nobody is there to ask about the agent's gated commands (a CLI without a terminal and
   * without `--approve-commands`): such a command becomes the task's question instead.
   */
  readonly unattended?: boolean;
}

/** The default when no human can be asked: nothing is approved. */
export const refuseApprovals: ApprovalPrompt = { approve: async () => false, unattended: true };

/** The safeguards that ask a person whether the loop should go on: their policy is `warningPolicy.ts`. */
export type { SafeguardCode };

export interface SafeguardWarning {
  code: SafeguardCode;
  taskId: string;
  message: string;
  iteration: number;
  maxIterations: number;
  /** `task-ended` of a task that asked something (NEEDS_HELP): the question, which the person may answer right there. */
  question?: string;
}

/** `answer`: the person answered the task's question (semi-auto's wait): the task resumes with it. */
export type SafeguardAnswer =
  { action: 'continue' } | { action: 'stop' } | { action: 'increase'; by: number } | { action: 'answer'; text: string };

/**
 * Answers a safeguard warning: the extension asks in the UI (and waits), the CLI applies
 * `safeguards.onWarning` when no one can answer.
 */
export interface SafeguardPrompt {
  decide(warning: SafeguardWarning): Promise<SafeguardAnswer>;
}

/**
 * Nobody to ask (the CLI, CI): apply `safeguards.onWarning`, except that repeated errors stop
 * the task — the autopilot would pause for a review no one can give — and a spend-rate alarm
 * stops the run: no one is there to accept the rate.
 */
export function unattendedSafeguards(onWarning: 'continue' | 'stop'): SafeguardPrompt {
  return { decide: async (warning) => ({ action: WARNING_POLICY[warning.code].unattended === 'stop' ? 'stop' : onWarning }) };
}

export interface Disposable {
  dispose(): void;
}
