import { probeSandbox } from '../../commands/sandbox';
import type { GateConfig } from '../../config/schema';
import { diagnoseEnvironment, environmentMessage, inWorktree } from '../../gates/environmentFault';
import type { IntegrityBaseline } from '../../gates/integrity';
import type { GateOutcome, GateReport } from '../../gates/types';
import type { Checkpoint } from '../../record/checkpoint';
import type { TaskLoopServices } from './types';

/**
 * A task's gate that cannot run where the task runs (gates/environmentFault.ts) stops the task
 * at its first run of the gates, with the sentence that says why and what to set. The first run
 * of a gate is its run at the task's base when it has one (the integrity baseline: the agent has
 * changed nothing yet), else its run after the first iteration.
 */

/** runGates' `diagnose` for gates run in `cwd`. */
export function environmentDiagnosis(
  services: Pick<TaskLoopServices, 'config'>,
  cwd: string,
): (gate: GateConfig, outcome: GateOutcome, output: string) => Promise<string | undefined> {
  return async (gate, outcome, output) => {
    const { commands, worktrees } = services.config;
    const sandboxed = commands.sandbox !== 'off' && (await probeSandbox()).available;
    const fault = await diagnoseEnvironment(output, outcome.parsed.tests, {
      cwd,
      sandboxed,
      network: commands.network,
      links: worktrees.link,
    });
    return fault && environmentMessage(gate, fault, { worktree: inWorktree(cwd), logPath: outcome.logPath });
  };
}

/** What a baseline's run at the base found that no change of the agent fixes. */
export function environmentAtBase(integrity: IntegrityBaseline | undefined): string | undefined {
  return integrity?.gates.find((g) => g.environment)?.environment;
}

/** No iteration of the task ran its gates yet: this one's are its first (diagnosed). */
export function firstGateRun(cp: Pick<Checkpoint, 'history'>): boolean {
  return cp.history.every((h) => h.gates.length === 0);
}

/**
 * Why the task stops at this iteration's gates: a fault found at the base (the baseline taken
 * beside this first iteration), or one of a gate with no run at the base in its first run.
 */
export function environmentStop(
  fresh: IntegrityBaseline | undefined,
  known: IntegrityBaseline | undefined,
  gates: GateReport | undefined,
): string | undefined {
  const atBase = environmentAtBase(fresh);
  if (atBase) return atBase;
  const ranAtBase = new Set((fresh ?? known)?.gates.filter((g) => g.verdict).map((g) => g.gate));
  return gates?.outcomes.find((o) => o.environment && o.required && !ranAtBase.has(o.name))?.environment;
}
