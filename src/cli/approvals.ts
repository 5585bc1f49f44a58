import type { ApprovalPrompt, SafeguardPrompt } from '../core/ports';
import { unattendedSafeguards } from '../core/ports';
import { warningRule } from '../core/warningPolicy';
import type { CliIo } from './io';

/** Which kinds of approval the flags of `ralph run` grant without asking. */
export interface CliApprovals {
  /** `--yes`: caio's actions (push, pull request, issue, notification). */
  actions: boolean;
  /** `--approve-commands`: the agent's own commands that the command rules gate. */
  commands: boolean;
}

const FLAG = { action: '--yes', command: '--approve-commands' } as const;
const NOUN = { action: 'caio action', command: 'gated command' } as const;

/**
 * caio's actions and the agent's gated commands are approved apart: `--yes` grants the first,
 * `--approve-commands` the second. What no flag grants is asked y/N on a terminal and refused
 * otherwise (caio's actions are then left pending; the command does not run).
 */
export function cliApproval(granted: CliApprovals, io: CliIo): ApprovalPrompt {
  const confirm = io.confirm;
  return {
    // no terminal and no --approve-commands: a gated command becomes the task's question
    unattended: !confirm && !granted.commands,
    approve: async (request) => {
      const flag = FLAG[request.kind];
      if (request.kind === 'action' ? granted.actions : granted.commands) {
        io.err(`approved (${flag}): ${request.title}${request.kind === 'command' ? `\n  ${request.detail}` : ''}`);
        return true;
      }
      if (!confirm) {
        io.err(`not approved: ${request.title} (stdin is not a terminal; run with ${flag} to approve every ${NOUN[request.kind]})`);
        return false;
      }
      return confirm(`${request.title}\n${request.detail.replace(/^/gm, '  ')}\nApprove? [y/N] `);
    },
  };
}

/**
 * Safeguard warnings: asked on a terminal (Continue? / Raise the limit?), otherwise
 * `safeguards.onWarning` applies — and repeated errors stop the task, since nobody can review them.
 */
export function cliSafeguards(onWarning: 'continue' | 'stop', io: CliIo): SafeguardPrompt {
  const confirm = io.confirm;
  if (!confirm) return unattendedSafeguards(onWarning);
  return {
    decide: async (warning) => {
      if (warning.question !== undefined && io.ask) {
        // semi-auto waits for the answer: given here, the task resumes with it
        const text = (
          (await io.ask(
            `${warning.taskId} asks: ${warning.question}\nYour answer (empty: go on without it; "stop": start no more tasks): `,
          )) ?? 'stop'
        ).trim();
        if (text.toLowerCase() === 'stop') return { action: 'stop' };
        return text ? { action: 'answer', text } : { action: 'continue' };
      }
      if (warningRule(warning.code)?.answers.includes('increaseMax')) {
        const by = Math.max(1, Math.ceil(warning.maxIterations / 2));
        return (await confirm(`${warning.message}. Raise the limit by ${by} to ${warning.maxIterations + by}? [y/N] `))
          ? { action: 'increase', by }
          : { action: 'continue' };
      }
      return (await confirm(`${warning.message}. Continue? [y/N] `)) ? { action: 'continue' } : { action: 'stop' };
    },
  };
}
