import path from 'node:path';
import { z } from 'zod';
import { oneLine } from './results';
import { capMiddle } from '../../commands/processRunner';
import { type AgentGateRun, defineTool } from './types';

export const runCommandTool = defineTool({
  name: 'run_command',
  description:
    'Run a shell command (bash -c) in the workspace root, without a terminal: nothing can prompt for input. Returns the exit code and the combined stdout/stderr, capped in the middle when long. Use it for builds, tests and linters.',
  schema: z.object({
    command: z.string().min(1).max(100_000).describe('The shell command line, e.g. "npm test -- --grep login".'),
    timeoutMs: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'Kill the command (and everything it started) after this many milliseconds. Capped by the configured limit, which is also the default.',
      ),
  }),
  async run(args, ctx) {
    const timeoutMs = Math.min(args.timeoutMs ?? ctx.commandTimeoutMs, ctx.commandTimeoutMs);
    // exactly a gate's command: the gate's own run, which the gate on this tree then takes (and which may be one already made)
    const asGate = await ctx.gateRuns?.run(args.command, { cwd: ctx.scope.root, timeoutMs, signal: ctx.signal });
    const result = asGate
      ? { ...asGate, signal: null, output: gateRunOutput(asGate, ctx.maxOutputChars) }
      : await ctx.commands.run({
          command: args.command,
          cwd: ctx.scope.root,
          timeoutMs,
          maxOutputChars: ctx.maxOutputChars,
          signal: ctx.signal,
          purpose: 'agent',
          // The one file under .ralph/ the agent keeps: its notes stay writable inside the sandbox.
          writablePaths: ctx.conversation ? [path.join(ctx.scope.root, '.ralph', 'progress', `${ctx.conversation.taskId}.md`)] : undefined,
        });
    let status: string;
    if (result.timedOut) status = `timed out after ${formatDuration(timeoutMs)}; the command and its child processes were killed`;
    else if (result.aborted) status = 'aborted: the run was stopped; the command and its child processes were killed';
    else if (result.exitCode !== null) status = `exit code ${result.exitCode}`;
    else status = `killed by signal ${result.signal ?? 'unknown'}`;

    const output = result.output.trim() === '' ? '(no output)' : result.output;
    const ok = result.exitCode === 0 && !result.timedOut && !result.aborted;
    return {
      ok,
      content: `$ ${args.command}\n${status}\n${output}`,
      summary: `${oneLine(args.command, 80)} (${status.split(';')[0]})`,
    };
  },
});

/** A gate's run as the agent reads it: capped like its own commands, with a line saying what it was. */
function gateRunOutput(run: AgentGateRun, maxChars: number): string {
  const how = run.reused
    ? `the gate "${run.gate}"'s command already ran on this exact tree in this run, in the gate's environment: that run's result is shown (nothing ran now; any other command line runs anew)`
    : `run as the gate "${run.gate}" (its command, in the gate's environment): on this exact tree the gate takes this result instead of running again`;
  return `${capMiddle(run.output, maxChars).text}\n[ralph] ${how}`;
}

function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const seconds = ms / 1000;
  return seconds < 120 ? `${Number(seconds.toFixed(1))} s` : `${Number((seconds / 60).toFixed(1))} min`;
}
