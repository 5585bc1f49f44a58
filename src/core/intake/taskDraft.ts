import { z } from 'zod';
import { TASK_TYPES, type TaskType } from '../tasks/schema';
import { jsonIn } from './jsonReply';

/** A task drafted from a conversation, for the person to add (or not). */
export interface TaskDraft {
  title: string;
  prompt: string;
  /** Absent when the conversation states no completion criteria: the person is asked, it is never guessed. */
  promise?: string;
  check?: string;
  type?: TaskType;
}

const DraftSchema = z.object({
  title: z.string().trim().min(1),
  prompt: z.string().trim().min(1),
  promise: z.string().trim().nullish(),
  check: z.string().trim().nullish(),
  type: z.string().nullish(),
});

/** What a chat model is asked to do with the conversation (any model: plain text in, JSON out). */
export const DRAFT_INSTRUCTIONS = `Turn the request below (and the conversation before it) into one task for Ralph Loop, an autonomous coding agent that works on it without seeing this conversation.
Reply with one JSON object and nothing else:
{"title": "short title", "prompt": "the exact request, complete on its own", "promise": "testable completion criteria stated or clearly agreed in the conversation, or null when none were", "check": "a shell command that passes only when the task is done, or null", "type": "${TASK_TYPES.join('|')}"}
Never invent completion criteria: when the conversation states none, "promise" is null.`;

/** The draft in a model's reply; undefined when the reply holds none. */
export function readTaskDraft(text: string): TaskDraft | undefined {
  const parsed = DraftSchema.safeParse(jsonIn(text));
  if (!parsed.success) return undefined;
  const { title, prompt, promise, check, type } = parsed.data;
  return {
    title: title.slice(0, 120),
    prompt,
    ...(promise ? { promise } : {}),
    ...(check ? { check } : {}),
    ...(type && (TASK_TYPES as readonly string[]).includes(type) ? { type: type as TaskType } : {}),
  };
}

/** A draft made without a model: the request as it was typed, its first line the title, no promise. */
export function draftFromText(text: string): TaskDraft {
  const prompt = text.trim();
  const first = prompt.split('\n', 1)[0].trim();
  return { title: first.length > 80 ? `${first.slice(0, 77)}…` : first, prompt };
}
