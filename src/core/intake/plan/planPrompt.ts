import type { GateConfig } from '../../config/schema';
import type { ChatMessage, ToolSpec } from '../../llm/types';
import type { Task } from '../../tasks/schema';
import type { Heading } from '../markdownOutline';
import { MAX_PLAN_TASKS, PLAN_TOOL, proposalJsonSchema } from './planSchema';

/** Everything the planning model reads. */
export interface PlanContext {
  /** Workspace-relative path of the document. */
  document: string;
  /** The text planned: the whole document, or the one section asked for. */
  text: string;
  section?: string;
  headings: readonly Heading[];
  layout: string;
  scripts: Record<string, string>;
  gates: readonly GateConfig[];
  existing: readonly Pick<Task, 'id' | 'title' | 'status' | 'source'>[];
}

export const PLAN_SYSTEM_PROMPT = `You plan software work for Ralph Loop. Ralph hands each task to an autonomous coding agent that starts every iteration with a fresh context and knows only the task: its request, its promise and the repository. A task is done when the agent's work meets the promise and the task's check command passes.

Read the document and the repository layout, then propose the tasks that implement what the document asks for.
- prompt: the exact request for the agent, complete on its own (the agent will not see the document): what to build or change, where, and the constraints the document sets.
- promise: testable completion criteria, taken from the document; never invent requirements it does not state.
- check: a shell command that exits 0 only when the task is done, using the project's own test runner (see its scripts and gates), e.g. a focused test run. Leave it out when no command fits.
- type and complexity (1 trivial … 14 very large).
- dependsOn: the keys of the tasks of this plan that must be done first, or ids of existing tasks.
- section: the heading of the document section the task comes from, exactly as written there.
- A task must fit one agent context: a focused change to a handful of files, complexity 8 or less. Split larger work into parts, in order, and mark each part with split { from, part, of, reason }.
- Do not propose work that an existing task already covers.
- At most ${MAX_PLAN_TASKS} tasks.
Answer by calling ${PLAN_TOOL} once. If you cannot call tools, answer with one JSON object of the same shape and nothing else.`;

export function planTool(): ToolSpec {
  return {
    name: PLAN_TOOL,
    description: 'Propose the tasks of the plan (called once, with the whole plan).',
    parameters: proposalJsonSchema(),
  };
}

export function planMessages(context: PlanContext): ChatMessage[] {
  const sections =
    context.headings.length > 0 ? context.headings.map((h) => `${'  '.repeat(h.level - 1)}- ${h.text}`).join('\n') : '(no headings)';
  const scripts = Object.entries(context.scripts).map(([name, command]) => `- ${name}: ${command}`);
  const gates = context.gates.map((g) => `- ${g.name} (${g.kind}${g.required ? ', required' : ''}): ${g.command}`);
  const existing = context.existing.map((t) => `- ${t.id} [${t.status}] ${t.title}`);
  const user = [
    `# Document: ${context.document}${context.section ? ` — section "${context.section}" only` : ''}`,
    `## Its sections\n${sections}`,
    `## Text\n${context.text}`,
    `# Repository layout\n${context.layout || '(empty repository)'}`,
    `# package.json scripts\n${scripts.join('\n') || '(none)'}`,
    `# Quality gates the orchestrator runs on every task\n${gates.join('\n') || '(none configured)'}`,
    `# Existing tasks\n${existing.join('\n') || '(none)'}`,
  ].join('\n\n');
  return [
    { role: 'system', content: PLAN_SYSTEM_PROMPT },
    { role: 'user', content: user },
  ];
}

/** What the model is told after a reply that could not be used. */
export function retryMessage(problems: readonly string[]): string {
  return `Your plan could not be used:\n${problems.map((p) => `- ${p}`).join('\n')}\nCall ${PLAN_TOOL} again with the whole corrected plan.`;
}
