import { z } from 'zod';
import { errorResult } from '../tools/results';
import { type AgentTool, defineTool, type ToolResult } from '../tools/types';
import { type DelegationOutcome, type Delegator, totalUsage } from './delegator';
import { ENVELOPE_RESPONSE_CHARS } from './envelope';
import { AGENT_NAMES, type DelegationRequest } from './types';

/** delegate_parallel: at most this many delegations in one call. */
export const MAX_PARALLEL_DELEGATIONS = 8;
/** All envelopes of one delegate_parallel share about this many characters of agent responses. */
const PARALLEL_RESPONSE_BUDGET = 12_000;

const DelegationSchema = z.object({
  target: z
    .enum(AGENT_NAMES)
    .describe('scout: read-only research · devo: implementation (edit, run, commit) · caio: push, pull requests, issues, notifications'),
  objective: z.string().trim().min(1).describe('What the sub-agent must achieve, specific enough to act on without asking.'),
  constraints: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('Limits to respect (files not to touch, approaches to avoid…).'),
  expectedOutcome: z.string().optional().describe('What "done" looks like.'),
  expectedEvidence: z
    .array(z.string().min(1))
    .optional()
    .describe(
      'Tool names that must have succeeded, e.g. ["run_command", "git_commit"]; each one missing shows as [MISSING] and the status is at most PARTIAL.',
    ),
});
type DelegationArgs = z.infer<typeof DelegationSchema>;

/** The orchestrator's delegation tools, bound to the run's delegator. */
export function createDelegationTools(delegator: Delegator): AgentTool[] {
  return [
    defineTool({
      name: 'delegate',
      description:
        'Hand one objective to a sub-agent and wait for its verified result: an envelope with the status derived from what its tools actually did (OK / ERROR / PENDING / MISSING lines) and its answer. Check the evidence before you trust the answer.',
      schema: DelegationSchema,
      async run(args, ctx) {
        const problem =
          checkRequest(delegator, args) ?? (ctx.conversation ? undefined : 'delegation is only available to the orchestrator');
        if (problem) return errorResult(problem);
        const outcome = await delegator.delegate(toRequest(args), ctx);
        return delegationResult([outcome]);
      },
    }),
    defineTool({
      name: 'delegate_parallel',
      description: `Run several independent delegations at once (at most ${delegator.maxParallel} at a time); each returns its own envelope, in the order given. Scouts may run in parallel; writers (devo: edits, commands, commits) share one working tree, so at most one writer per call. Never for steps that depend on each other.`,
      schema: z.object({
        delegations: z
          .array(DelegationSchema)
          .min(1)
          .max(MAX_PARALLEL_DELEGATIONS)
          .describe('The delegations, each like the arguments of delegate.'),
      }),
      async run(args, ctx) {
        const problems = args.delegations.map((d, i) => {
          const problem = checkRequest(delegator, d);
          return problem ? `delegations.${i}: ${problem}` : undefined;
        });
        if (!ctx.conversation) problems.push('delegation is only available to the orchestrator');
        problems.push(parallelWriters(delegator, args.delegations));
        if (problems.some(Boolean)) return errorResult(problems.filter(Boolean).join('\n'));
        const perEnvelope = Math.min(
          ENVELOPE_RESPONSE_CHARS,
          Math.max(1000, Math.floor(PARALLEL_RESPONSE_BUDGET / args.delegations.length)),
        );
        const outcomes = await delegator.delegateAll(args.delegations.map(toRequest), ctx, perEnvelope);
        return delegationResult(outcomes);
      },
    }),
  ];
}

/** An expected tool the target cannot call would always be [MISSING]: say so before running anything. */
function checkRequest(delegator: Delegator, args: DelegationArgs): string | undefined {
  const allowed = delegator.toolsOf(args.target);
  const impossible = (args.expectedEvidence ?? []).filter((tool) => !allowed.includes(tool));
  if (impossible.length === 0) return undefined;
  return `${args.target} cannot call ${impossible.join(', ')}, so that evidence could never appear; its tools are ${allowed.join(', ')}.`;
}

/**
 * Two writers at once would edit the same working tree: one's git_commit would commit the
 * other's changes and neither envelope's evidence would be its own. Refused before anything runs.
 */
function parallelWriters(delegator: Delegator, delegations: readonly DelegationArgs[]): string | undefined {
  const writers = delegations.map((d, i) => ({ target: d.target, i })).filter((d) => delegator.writesTree(d.target));
  if (writers.length < 2) return undefined;
  const which = writers.map((w) => `delegations.${w.i} (${w.target})`).join(', ');
  return (
    `refused, nothing ran: ${which} can all change the working tree, and parallel writers would share it ` +
    `(one's git_commit would commit the other's changes, and no envelope's evidence would be its own). ` +
    'Scouts may run in parallel; writers one at a time: call delegate for each writer in turn (delegate_parallel takes at most one writer, beside scouts).'
  );
}

function toRequest(args: DelegationArgs): DelegationRequest {
  const constraints = typeof args.constraints === 'string' ? [args.constraints] : args.constraints;
  return {
    target: args.target,
    objective: args.objective,
    ...(constraints && constraints.length > 0 ? { constraints } : {}),
    ...(args.expectedOutcome ? { expectedOutcome: args.expectedOutcome } : {}),
    ...(args.expectedEvidence && args.expectedEvidence.length > 0 ? { expectedEvidence: args.expectedEvidence } : {}),
  };
}

/** The envelopes as the tool result; an error result when every delegation failed. */
function delegationResult(outcomes: readonly DelegationOutcome[]): ToolResult {
  const statuses = outcomes.map((o) => `${o.request.target} ${o.result.status.toUpperCase()}`);
  return {
    ok: outcomes.some((o) => o.result.status !== 'failed'),
    content: outcomes.map((o) => o.envelope).join('\n\n'),
    summary: statuses.join(', '),
    usage: totalUsage(outcomes),
  };
}
