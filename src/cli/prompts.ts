import type { ApprovalPrompt, SafeguardPrompt } from '../core/ports';
import { unattendedSafeguards } from '../core/ports';
import type { CliIo } from './io';

/** caio's actions: approved by --yes, asked y/N on a terminal, refused (left pending) otherwise. */
export function cliApproval(yes: boolean, io: CliIo): ApprovalPrompt {
  if (yes) {
    return {
      approve: async (request) => {
        io.err(`approved (--yes): ${request.title}`);
        return true;
      },
    };
  }
  const confirm = io.confirm;
  if (!confirm) {
    return {
      approve: async (request) => {
        io.err(`not approved: ${request.title} (stdin is not a terminal; run with --yes to approve such actions)`);
        return false;
      },
    };
  }
  return { approve: (request) => confirm(`${request.title}\n${request.detail.replace(/^/gm, '  ')}\nApprove? [y/N] `) };
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
      if (warning.code === 'iteration-ratio') {
        const by = Math.max(1, Math.ceil(warning.maxIterations / 2));
        return (await confirm(`${warning.message}. Raise the limit by ${by} to ${warning.maxIterations + by}? [y/N] `)) ? { action: 'increase', by } : { action: 'continue' };
      }
      return (await confirm(`${warning.message}. Continue? [y/N] `)) ? { action: 'continue' } : { action: 'stop' };
    },
  };
}
