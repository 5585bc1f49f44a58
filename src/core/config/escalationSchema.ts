import { z } from 'zod';
import { AgentKindSchema } from './agentSchema';

/**
 * One step of the escalation ladder: a model of the built-in agent (a string, as in `llm.models`),
 * or an agent and its model — `{ "agent": "claude-code", "model": "opus" }`, `{ "agent": "codex" }`
 * (the CLI's own default model), `{ "agent": "builtin", "model": "o3" }`.
 */
export const LadderStepSchema = z.union(
  [
    z.string().min(1, 'a ladder step names a model: it cannot be empty'),
    z
      .strictObject({
        agent: AgentKindSchema.describe('the agent of the iterations on this step'),
        model: z.string().min(1).optional().describe("its model (default: the agent CLI's own choice; the built-in agent needs one)"),
      })
      .refine((step) => step.agent !== 'builtin' || step.model !== undefined, {
        message: 'a step of the built-in agent names its model: { "agent": "builtin", "model": "…" }',
        path: ['model'],
      }),
  ],
  {
    error: () =>
      'a ladder step is a model of the built-in agent ("gpt-4.1") or an agent with its model ({ "agent": "claude-code", "model": "opus" })',
  },
);
export type LadderStepInput = z.infer<typeof LadderStepSchema>;

export const EscalationConfigSchema = z
  .strictObject({
    ladder: z
      .array(LadderStepSchema)
      .min(1, 'the ladder needs at least one step')
      .optional()
      .describe(
        'the ladder a task climbs, cheapest first (default: the models of llm.models, on the task\'s agent): a step is a model of the built-in agent ("gpt-4.1-mini") or an agent and its model ({ "agent": "claude-code", "model": "opus" }, { "agent": "codex" })',
      ),
    threshold: z
      .number()
      .int()
      .positive()
      .default(2)
      .describe('consecutive failed iterations on a step before the next step up the ladder takes over'),
    councilAfter: z.number().int().positive().default(3).describe('failed iterations on the top step before the bug council is convened'),
    councilModels: z.array(z.string().min(1)).optional().describe("the bug council's analysts; default: the models of llm.models"),
  })
  .prefault({});
