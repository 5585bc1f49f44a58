import type { ChatMessage } from '../llm/types';
import type { IterationRecord } from '../record/checkpoint';
import { pinnedAnswers } from '../tasks/questions';
import type { Task } from '../tasks/schema';

export interface IterationContextInput {
  task: Task;
  iteration: number;
  maxIterations: number;
  /** Workspace-relative path of `.ralph/progress/<id>.md`. */
  progressFile: string;
  progressNotes: string;
  previous: IterationRecord | undefined;
  recentCommits: { sha: string; message: string }[];
}

const MAX_NOTES_CHARS = 12_000;

export const SYSTEM_PROMPT = `You are an autonomous software engineer working inside a Ralph loop.

How the loop works:
- Every iteration starts with a fresh context: you remember nothing from earlier iterations.
  What persists is the repository (files, git history) and your progress notes file.
- Work with the tools: read_file, write_file, edit_file, list_files, search, run_command, git_commit.
  Paths are relative to the workspace root; you cannot leave the workspace.
- Keep your progress notes file up to date before you stop: what is done, what is next, what failed.
  The next iteration reads it first.
- The orchestrator commits your changes at the end of each iteration; git_commit is optional.
- Verify before you claim: run the tests or commands that prove the promise is met.

Sub-agents (delegate / delegate_parallel):
- scout researches read-only (files, patterns, recommendations); devo implements (edits, runs commands, commits);
  caio acts outside the working tree (git push, pull requests, issues, notifications), each action only after a human approves.
- Delegate a self-contained objective when it saves you context: broad exploration to scout, a well-defined change to devo,
  anything leaving the repository to caio. Do small, quick things yourself.
- delegate_parallel runs independent delegations at once: scouts in parallel, at most one devo per call (writers share the working tree,
  so they go one at a time); never steps that depend on each other.
- Name expectedEvidence (e.g. ["run_command", "git_commit"]) when the objective must be proven by certain tools.
- A sub-agent's result is an envelope whose status comes from what its tools actually did:
  [OK] / [ERROR] / [PENDING] (awaiting approval) / [MISSING] (expected, never succeeded). Trust the evidence, not the prose:
  on PARTIAL, FAILED or ESCALATED decide yourself whether to fix it, re-delegate differently, or report it.

Signals (call the tool, or write the tag in your reply):
- ralph_complete / <ralph>COMPLETE</ralph> — only when the promise is met, with evidence.
- report_progress / <ralph>PROGRESS:N</ralph> — estimated percent of the whole task done.
- report_blocked / <ralph>BLOCKED:reason</ralph> — you cannot proceed without something outside your reach.
- ask_for_help / <ralph>NEEDS_HELP:question</ralph> — a human must decide or answer something.
If the work is not finished when you stop, give a PROGRESS signal; the loop will start a new iteration.`;

/**
 * The part of a task's iteration request that never changes while the task runs: its id,
 * title, type, exact request and promise. It leads the user message, right after the system
 * prompt and the tool definitions (identical for every task of a run), so every iteration's
 * request starts with the same bytes and a provider's prompt cache can serve them. Nothing that
 * changes between iterations (the iteration number, notes, feedback, commits) may go in here.
 */
export function taskBrief(task: Task): string {
  const answers = pinnedAnswers(task.questions);
  // answers change only when the person answers: they stay in the stable prefix, after the request they refine
  return [
    `# Task ${task.id}: ${task.title}`,
    `Task type: ${task.type}.`,
    `## Original request (exact)\n${task.prompt}`,
    `## Promise (completion criteria)\n${task.promise}`,
    ...(answers ? [answers] : []),
  ].join('\n\n');
}

/**
 * What a compaction pins after its summary (and what sub-agents are handed): the exact request,
 * followed by the person's answers and review feedback, which are part of what was asked.
 */
export function pinnedRequest(task: Task): string {
  const answers = pinnedAnswers(task.questions);
  return answers ? `${task.prompt}\n\n${answers}` : task.prompt;
}

/**
 * The fresh context of one iteration: the system prompt and one user message that starts with
 * the task's fixed brief (the stable, cacheable prefix) and goes on with everything that
 * carries over from earlier iterations (volatile: after the prefix).
 */
export function buildIterationMessages(input: IterationContextInput): ChatMessage[] {
  const { task, iteration, maxIterations } = input;
  const sections: string[] = [taskBrief(task)];
  sections.push(`## This iteration\nIteration ${iteration} of at most ${maxIterations}.`);
  sections.push(`## Progress notes (${input.progressFile})\n${notesSection(input.progressNotes)}`);
  const previous = previousSection(input.previous);
  if (previous) sections.push(previous);
  if (input.recentCommits.length > 0) {
    const lines = input.recentCommits.map((c) => `- ${c.sha.slice(0, 8)} ${firstLine(c.message)}`);
    sections.push(`## Recent commits\n${lines.join('\n')}`);
  }
  sections.push(
    `## Now\nContinue the task from where the notes and the repository leave off. Update ${input.progressFile} before you finish, then signal.`,
  );
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: sections.join('\n\n') },
  ];
}

function notesSection(notes: string): string {
  const trimmed = notes.trim();
  if (!trimmed) return '(empty: this is the first iteration, or no notes were kept)';
  if (trimmed.length <= MAX_NOTES_CHARS) return trimmed;
  return `… [${trimmed.length - MAX_NOTES_CHARS} earlier characters omitted]\n${trimmed.slice(-MAX_NOTES_CHARS)}`;
}

function previousSection(previous: IterationRecord | undefined): string | undefined {
  if (!previous) return undefined;
  const lines = [`## Previous iteration (#${previous.iteration})`];
  lines.push(`- Outcome: ${previous.outcome}${previous.signal ? `, signal ${previous.signal}` : ', no signal'}`);
  if (previous.filesChanged.length > 0) lines.push(`- Files changed: ${previous.filesChanged.slice(0, 20).join(', ')}`);
  if (previous.error) lines.push(`- Error: ${previous.error}`);
  for (const item of previous.feedback) lines.push(`- ${item}`);
  if (previous.summary) lines.push(`- Its last words: ${previous.summary}`);
  return lines.join('\n');
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0];
}

/**
 * What an agent CLI (Claude Code, Codex…) is told in place of the built-in agent's system prompt:
 * the loop, the notes, and Ralph's signal tools — its own tools are its own.
 */
export const AGENT_CLI_PROMPT = `You are an autonomous software engineer working inside a Ralph loop, in a fresh session.

How the loop works:
- Every iteration is a new session: you remember nothing from earlier iterations. What persists is
  the repository (files, git history) and your progress notes file.
- Work in the current directory with your own tools; do not leave it.
- Keep your progress notes file up to date before you stop: what is done, what is next, what failed.
- The orchestrator commits your changes at the end of the session and then runs the quality gates itself:
  your word that the work is done is checked, never taken.
- Verify before you claim: run the tests or commands that prove the promise is met. Never weaken, skip or
  delete tests to make them pass.

Signals (call the tool of the MCP server "ralph", or write the tag in your last message):
- ralph_complete / <ralph>COMPLETE</ralph> — only when the promise is met, with evidence.
- report_progress / <ralph>PROGRESS:N</ralph> — estimated percent of the whole task done.
- report_blocked / <ralph>BLOCKED:reason</ralph> — you cannot proceed without something outside your reach.
- ask_for_help / <ralph>NEEDS_HELP:question</ralph> — a human must decide or answer something.
If the work is not finished when you stop, give a PROGRESS signal; the loop will start a new session.`;

/** An agent CLI's prompt for one iteration: the same fresh context as the built-in agent's, as one text. */
export function buildAgentCliPrompt(input: IterationContextInput): string {
  const user = buildIterationMessages(input).find((m) => m.role === 'user');
  return `${AGENT_CLI_PROMPT}\n\n${typeof user?.content === 'string' ? user.content : ''}`;
}
