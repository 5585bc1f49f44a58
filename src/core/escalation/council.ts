import { errorMessage } from '../errors';
import type { RalphEventBody } from '../events';
import type { ChatMessage, ModelClient } from '../llm/types';
import type { IterationRecord } from '../record/checkpoint';
import type { Task } from '../tasks/schema';

/** The analysts' briefs; each model of the council gets one (cycling when there are more models). */
const ANALYST_BRIEFS = [
  'You are the root-cause analyst. From the failure history, name the most likely root cause and the evidence for it.',
  'You are the test analyst. Read the failing tests and errors literally: what exactly do they expect that the code does not do?',
  "You are the devil's advocate. The attempted fixes did not work: what assumption do they share that may be wrong, and what different approach would avoid it?",
];

const SYNTHESIZER_BRIEF =
  "You chair a bug council. Merge the analysts' answers into: (1) the root cause, in one or two sentences; (2) a numbered plan of at most five concrete steps for the next attempt; (3) what NOT to try again. Be specific: files, functions, tests.";

export interface CouncilInput {
  task: Task;
  history: readonly IterationRecord[];
  /** What stuck detection or the failure count said. */
  trigger: string;
  models: readonly string[];
  synthesizer: string;
  model: ModelClient;
  signal: AbortSignal;
  emit(body: RalphEventBody): void;
  iteration: number;
}

export interface CouncilResult {
  plan: string;
  analysts: { model: string; ok: boolean }[];
}

/**
 * The bug council: several analysts receive the failure history, the attempted fixes and the
 * error context in parallel; a synthesizer merges their answers into a root cause and a plan
 * that the next iteration receives. Every call goes through the same (metered) model client.
 */
export async function conveneCouncil(input: CouncilInput): Promise<CouncilResult> {
  const dossier = buildDossier(input.task, input.history, input.trigger);
  input.emit({
    type: 'council.started',
    taskId: input.task.id,
    iteration: input.iteration,
    models: [...input.models],
    reason: input.trigger,
  });
  const answers = await Promise.all(
    input.models.map(async (model, index) => {
      const messages: ChatMessage[] = [
        { role: 'system', content: ANALYST_BRIEFS[index % ANALYST_BRIEFS.length] },
        { role: 'user', content: dossier },
      ];
      try {
        const response = await input.model.chat({ model, messages, signal: input.signal, purpose: 'council' });
        return { model, ok: true, text: response.content.trim() };
      } catch (error) {
        return { model, ok: false, text: `(analyst failed: ${errorMessage(error)})` };
      }
    }),
  );
  const usable = answers.filter((a) => a.ok && a.text);
  if (usable.length === 0) throw new Error(`every council analyst failed: ${answers.map((a) => a.text).join('; ')}`);
  const synthesis = await input.model.chat({
    model: input.synthesizer,
    signal: input.signal,
    purpose: 'council',
    messages: [
      { role: 'system', content: SYNTHESIZER_BRIEF },
      {
        role: 'user',
        content: `${dossier}\n\n## Analysts' answers\n${usable.map((a, i) => `### Analyst ${i + 1} (${a.model})\n${a.text}`).join('\n\n')}`,
      },
    ],
  });
  const plan = synthesis.content.trim() || usable.map((a) => a.text).join('\n\n');
  input.emit({ type: 'council.finished', taskId: input.task.id, iteration: input.iteration, plan });
  return { plan, analysts: answers.map((a) => ({ model: a.model, ok: a.ok })) };
}

function buildDossier(task: Task, history: readonly IterationRecord[], trigger: string): string {
  const recent = history.slice(-6);
  const lines = [
    `# Task ${task.id}: ${task.title}`,
    `## Request\n${task.prompt}`,
    `## Promise\n${task.promise}`,
    `## Why the council was convened\n${trigger}`,
    '## Attempts (most recent last)',
  ];
  for (const r of recent) {
    lines.push(
      [
        `### Iteration ${r.iteration} on ${r.model}: ${r.outcome}${r.signal ? `, signal ${r.signal}` : ''}`,
        r.filesChanged.length ? `Files changed: ${r.filesChanged.slice(0, 15).join(', ')}` : 'No files changed.',
        r.gates.length ? `Gates: ${r.gates.map((g) => `${g.name} ${g.passed ? 'pass' : `FAIL (${g.summary})`}`).join('; ')}` : '',
        r.error ? `Error: ${r.error}` : '',
        r.feedback.length
          ? `Fed back:\n${r.feedback
              .slice(0, 8)
              .map((f) => `- ${f.slice(0, 400)}`)
              .join('\n')}`
          : '',
        r.summary ? `Agent's last words: ${r.summary.slice(0, 400)}` : '',
      ]
        .filter(Boolean)
        .join('\n'),
    );
  }
  return lines.join('\n\n');
}
