import { z } from 'zod';
import { clampPercent } from '../../signals/parser';
import { oneLine } from './results';
import { defineTool } from './types';

export const ralphCompleteTool = defineTool({
  name: 'ralph_complete',
  description:
    "Declare the task complete. Only call this when every point of the promise holds; the orchestrator then runs the quality gates itself, and failures come back as the next iteration's work.",
  schema: z.object({
    summary: z.string().min(1).describe('What was done, in a few sentences.'),
    promiseEvidence: z
      .string()
      .min(1)
      .describe('How each completion criterion of the promise is met: the commands run, the tests that pass, the files that show it.'),
    artifactPaths: z
      .array(z.string().max(4096))
      .max(1000)
      .optional()
      .describe('Workspace-relative paths of the main files created or changed.'),
  }),
  async run(args) {
    return {
      ok: true,
      content: 'Completion recorded. The orchestrator will now verify it with the quality gates; end your turn.',
      summary: `complete: ${oneLine(args.summary, 120)}`,
      signal: {
        kind: 'COMPLETE',
        summary: args.summary,
        promiseEvidence: args.promiseEvidence,
        ...(args.artifactPaths ? { artifactPaths: args.artifactPaths } : {}),
      },
    };
  },
});

export const reportProgressTool = defineTool({
  name: 'report_progress',
  description:
    'Report how far the task is, as an estimate from 0 to 100, with an optional note on what was just finished. Keep working afterwards.',
  schema: z.object({
    percent: z.number().min(0).max(100).describe('Estimated share of the task done, 0 to 100.'),
    note: z.string().optional().describe('One line on what was just finished or what comes next.'),
  }),
  async run(args) {
    const percent = clampPercent(args.percent);
    return {
      ok: true,
      content: `Progress ${percent}% recorded. Continue.`,
      summary: `progress ${percent}%${args.note ? `: ${oneLine(args.note, 120)}` : ''}`,
      signal: { kind: 'PROGRESS', percent, ...(args.note ? { note: args.note } : {}) },
    };
  },
});

export const reportBlockedTool = defineTool({
  name: 'report_blocked',
  description:
    'Stop because the task cannot go on without an outside change (missing credentials, a broken dependency, a contradiction in the request). The task is marked blocked for a human.',
  schema: z.object({
    reason: z.string().min(1).describe('What blocks the task and what would unblock it.'),
  }),
  async run(args) {
    return {
      ok: true,
      content: 'Blocked status recorded. End your turn.',
      summary: `blocked: ${oneLine(args.reason, 120)}`,
      signal: { kind: 'BLOCKED', reason: args.reason },
    };
  },
});

export const askForHelpTool = defineTool({
  name: 'ask_for_help',
  description:
    'Ask the human a question that must be answered before going on (a decision only they can make). The task waits for the answer.',
  schema: z.object({
    question: z.string().min(1).describe('The question, with the options you see and the one you would pick.'),
  }),
  async run(args) {
    return {
      ok: true,
      content: 'Question recorded for the human. End your turn.',
      summary: `needs help: ${oneLine(args.question, 120)}`,
      signal: { kind: 'NEEDS_HELP', question: args.question },
    };
  },
});
