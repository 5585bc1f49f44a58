import type { ChatResponse } from '../../llm/types';
import { formatZodIssues } from '../../util/zodIssues';
import { jsonIn } from '../jsonReply';
import { findHeading, type Heading } from '../markdownOutline';
import { PLAN_TOOL, type PlannedTask, type Proposal, ProposalSchema } from './planSchema';

/** A planning reply checked: the tasks as planned, or what was wrong with it (fed back to the model). */
export type PlanReply = { ok: true; proposal: Proposal; callId?: string } | { ok: false; problems: string[]; callId?: string };

/**
 * Reads the model's plan: the `propose_tasks` call's arguments, or (for a model that cannot
 * call tools) a JSON object in its text, validated with zod. Never throws: a bad reply is
 * described for the retry.
 */
export function readPlanReply(response: ChatResponse): PlanReply {
  const call = response.toolCalls.find((c) => c.name === PLAN_TOOL);
  let raw: unknown;
  if (call) {
    if (call.malformed) return { ok: false, problems: [`the ${PLAN_TOOL} call was malformed: ${call.malformed}`], callId: call.id };
    try {
      raw = JSON.parse(call.arguments);
    } catch (error) {
      return { ok: false, problems: [`the arguments of ${PLAN_TOOL} are not valid JSON (${(error as Error).message})`], callId: call.id };
    }
  } else {
    const other = response.toolCalls[0];
    if (other) return { ok: false, problems: [`called ${other.name}; the only tool is ${PLAN_TOOL}`], callId: other.id };
    const json = jsonIn(response.content);
    if (json === undefined) return { ok: false, problems: [`the reply neither called ${PLAN_TOOL} nor contained a JSON plan`] };
    raw = json;
  }
  const parsed = ProposalSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, problems: formatZodIssues(parsed.error), callId: call?.id };
  const problems = keyProblems(parsed.data);
  return problems.length > 0 ? { ok: false, problems, callId: call?.id } : { ok: true, proposal: parsed.data, callId: call?.id };
}

/** Keys must be unique; a dependency must name a key of the plan or an existing task (checked later, with the store). */
function keyProblems(proposal: Proposal): string[] {
  const problems: string[] = [];
  const keys = new Set<string>();
  for (const task of proposal.tasks) {
    if (keys.has(task.key)) problems.push(`the key "${task.key}" is used by two tasks`);
    keys.add(task.key);
  }
  return problems;
}

/** Where a task of the plan links to: the document, at the section it names when that heading exists. */
export function sourceLink(
  document: string,
  headings: readonly Heading[],
  section: string | null | undefined,
  fallback?: Heading,
): { source: string; section?: string; note?: string } {
  const heading = section ? findHeading(headings, section) : undefined;
  if (heading) return { source: `${document}#${heading.slug}`, section: heading.text };
  if (fallback)
    return {
      source: `${document}#${fallback.slug}`,
      section: fallback.text,
      ...(section ? { note: `the section "${section}" is not a heading of ${document}` } : {}),
    };
  return { source: document, ...(section ? { note: `the section "${section}" is not a heading of ${document}` } : {}) };
}

/** The planned tasks of a valid proposal; unknown dependencies come back as problems for the retry. */
export function plannedTasks(
  proposal: Proposal,
  document: string,
  headings: readonly Heading[],
  existingIds: ReadonlySet<string>,
  planned?: Heading,
): { tasks: PlannedTask[]; problems: string[] } {
  const keys = new Set(proposal.tasks.map((t) => t.key));
  const problems: string[] = [];
  const tasks = proposal.tasks.map((task) => {
    const dependsOn = [...new Set((task.dependsOn ?? []).filter((d) => d !== task.key))];
    for (const dependency of dependsOn) {
      if (!keys.has(dependency) && !existingIds.has(dependency))
        problems.push(`"${task.key}" depends on "${dependency}", which is neither a key of this plan nor an existing task id`);
    }
    const link = sourceLink(document, headings, task.section, planned);
    const notes: string[] = [];
    if (link.note) notes.push(link.note);
    if (task.split) notes.push(`part ${task.split.part} of ${task.split.of} of "${task.split.from}": split because ${task.split.reason}`);
    if (task.complexity > 8 && !task.split)
      notes.push(`complexity ${task.complexity}: may be too large for one agent context; consider splitting it`);
    const out: PlannedTask = {
      key: task.key,
      title: task.title,
      prompt: task.prompt,
      promise: task.promise,
      type: task.type,
      complexity: task.complexity,
      dependsOn,
      source: link.source,
      notes,
    };
    if (task.check) out.check = task.check;
    if (link.section) out.section = link.section;
    if (task.split) out.split = { from: task.split.from, part: task.split.part, of: task.split.of, reason: task.split.reason };
    return out;
  });
  return { tasks, problems };
}
