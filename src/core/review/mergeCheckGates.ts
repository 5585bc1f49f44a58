import type { RalphConfig } from '../config/schema';
import type { RalphEventBody } from '../events';
import { ProbingGateRunner } from '../gates/probe/probeRunner';
import { ProcessGateRunner } from '../gates/runGates';
import type { GateRunner } from '../gates/types';
import type { RalphPaths } from '../paths';
import { ControlFileGuard } from '../guards/controlFileGuard';
import { GuardedGateRunner } from '../guards/guardedRunners';
import type { CommandRunner } from '../commands/processRunner';
import { IsolatedCommandRunner, isolationSettings } from '../commands/sandbox';
import type { SecretRedactor } from '../commands/secrets';

/**
 * The required gates of a merged check run outside a run (an approval that must re-check on a
 * moved tip): sandboxed, scrubbed and watched like the queue's own check, as child processes —
 * or through `gates` (the editor's Tasks API runner) when given.
 */
export function mergeCheckGates(
  deps: {
    paths: RalphPaths;
    config: RalphConfig;
    commands: CommandRunner;
    redactor: SecretRedactor;
    emit?: (body: RalphEventBody) => void;
    gates?: GateRunner;
  },
  mergeWorktree: string,
): GateRunner {
  const guard = new ControlFileGuard(deps.paths, deps.emit ?? (() => {}), { ownStateOnly: true });
  const isolated = new IsolatedCommandRunner(deps.commands, isolationSettings(mergeWorktree, deps.config), deps.redactor);
  return new GuardedGateRunner(new ProbingGateRunner(deps.gates ?? new ProcessGateRunner(isolated)), guard);
}
