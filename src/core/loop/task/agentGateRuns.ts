import type { AgentGateRuns } from '../../agent/tools/types';
import { evaluateCommand } from '../../commands/commandPolicy';
import { reportDirs } from '../../gates/reportFile';
import { gatesFor } from '../../gates/taskCheck';
import type { Task } from '../../tasks/schema';
import type { TaskLoopServices } from './types';

/**
 * The agent's `run_command` of one of its task's gate commands (issue 37): when the command is
 * exactly a gate's (the task's `check` included) and the command policy allows it as it stands,
 * it is run by the gates' runner — the run's gate cache in front of the same guarded runner the
 * gate uses, in the same sandbox, with the same environment, its whole output kept. The gate on
 * that tree then takes the result (a passing one) instead of running the suite again; the agent
 * takes a passing run already made on that tree.
 *
 * Anything else runs as the agent's own command and never stands for a gate: another command
 * line (`FOO=1 npm test`, `env … npm test`, `export X=1; npm test`, `npm test | tee`), a gate
 * with `reuse: false`, a command the policy refuses or asks about (it goes through the policy
 * then, as always). What the agent's commands change in the environment does not reach a gate's
 * run: each gate run starts from the orchestrator's environment, not the agent's shell.
 */
export function agentGateRuns(services: Pick<TaskLoopServices, 'config' | 'gates'>, task: Pick<Task, 'id' | 'check'>): AgentGateRuns {
  return {
    async run(command, { cwd, timeoutMs, signal }) {
      const gate = gatesFor(task, services.config.gates).find((g) => g.command.trim() === command.trim() && g.reuse !== false);
      if (!gate) return undefined;
      const decision = await evaluateCommand(command, services.config, { root: cwd });
      // a gate's command is the person's own: what the sandbox would confine (its inline code) the gate runs anyway
      if (decision.action === 'deny' || (decision.action === 'ask' && !decision.confinable)) return undefined;
      // a gate that writes a report (`gates[].report`) may write its folder, as in the gate's own runs
      const writableDirs = await reportDirs(gate, cwd);
      const run = await services.gates.run({
        gate,
        cwd,
        timeoutMs,
        signal,
        reuse: 'passing',
        taskId: task.id,
        ...(writableDirs ? { writableDirs } : {}),
      });
      return {
        gate: gate.name,
        exitCode: run.exitCode,
        timedOut: run.timedOut,
        aborted: run.aborted,
        output: run.output,
        reused: run.reused === true,
      };
    },
  };
}
