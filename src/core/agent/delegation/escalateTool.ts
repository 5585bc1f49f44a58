import { z } from 'zod';
import { oneLine } from '../tools/results';
import { type AgentTool, defineTool } from '../tools/types';

/** A sub-agent's way to hand the problem back: ends its conversation with status `escalated`. */
export function createEscalateTool(onEscalate: (reason: string) => void): AgentTool {
  return defineTool({
    name: 'escalate',
    description:
      'Hand the problem back to the orchestrator and stop: the objective cannot be reached as given, or it needs a decision that is not yours. Say what you found, what blocks you and what you would need.',
    schema: z.object({
      reason: z
        .string()
        .trim()
        .min(1)
        .describe('What blocks the objective, what you tried, and what the orchestrator should decide or do.'),
    }),
    async run(args) {
      onEscalate(args.reason);
      return {
        ok: true,
        content: 'Escalated to the orchestrator. End your turn now.',
        summary: `escalated: ${oneLine(args.reason, 120)}`,
        endTurn: true,
      };
    },
  });
}
