/**
 * The warning policy, typed once: for each safeguard warning, whether the run waits for a
 * person's answer, whether it pauses the whole autopilot while it waits, the answers a person may
 * give, and what happens when nobody can be asked. The editor's run controller, its status bar,
 * notifications and panel, and the CLI all read this table.
 *
 * A leaf: it imports nothing, so the panel's protocol (which carries no core code into the
 * webview bundle) may read it too.
 */

/** The answers a person may give to a safeguard warning (the panel's buttons, the notification's). */
export type WarningAnswer = 'continue' | 'stop' | 'increaseMax' | 'reviewErrors';

export interface WarningRule {
  /** The run waits for an answer before it goes on (the other warnings let the loop go on; their answers act on it directly). */
  readonly waits: boolean;
  /** While it waits, the whole autopilot is paused (Continue = Resume); otherwise only new starts wait. */
  readonly pauses: boolean;
  /** The answers offered, in the order shown (the first is the main one). */
  readonly answers: readonly WarningAnswer[];
  /** Nobody to ask (the CLI without a terminal, CI): `stop`, or `safeguards.onWarning` as configured. */
  readonly unattended: 'stop' | 'asConfigured';
}

/**
 * The safeguards that ask a person whether the loop should go on. `task-ended`: in semi-auto
 * mode a task ended blocked, needs_help or timeout, and the run waits before it starts another.
 * `spend-rate`: the spend-rate alarm (budget.maxCostPerHourUsd or a spike) pauses the autopilot.
 * `security-critical`: a task halted on a critical security finding; the next task waits.
 */
export const WARNING_POLICY = {
  'no-commits': { waits: false, pauses: false, answers: ['continue', 'stop'], unattended: 'asConfigured' },
  'iteration-ratio': { waits: false, pauses: false, answers: ['continue', 'increaseMax'], unattended: 'asConfigured' },
  // repeated errors: the autopilot would pause for a review no one can give, so unattended it stops
  'error-threshold': { waits: true, pauses: true, answers: ['reviewErrors', 'continue', 'stop'], unattended: 'stop' },
  // semi-auto mode: go on with the next task, or stop; the other agents work on meanwhile
  'task-ended': { waits: true, pauses: false, answers: ['continue', 'stop'], unattended: 'asConfigured' },
  // nobody unattended can allow more spending
  'spend-rate': { waits: true, pauses: true, answers: ['continue', 'stop'], unattended: 'stop' },
  // start the next task, or none; nobody unattended can decide that
  'security-critical': { waits: true, pauses: false, answers: ['continue', 'stop'], unattended: 'stop' },
} as const satisfies Record<string, WarningRule>;

export type SafeguardCode = keyof typeof WARNING_POLICY;

export const SAFEGUARD_CODES = Object.keys(WARNING_POLICY) as readonly SafeguardCode[];

/** A safeguard's rule; undefined for the other warnings (model switches and the like), which only inform. */
export function warningRule(code: string): WarningRule | undefined {
  return Object.hasOwn(WARNING_POLICY, code) ? WARNING_POLICY[code as SafeguardCode] : undefined;
}
