import { parseArgs } from 'node:util';

/**
 * The person's verbs (DESIGN §7): `ralph task answer`, `ralph task council` and
 * `ralph review list|diff|approve|changes|reject`.
 */
export const PERSON_USAGE = `  task answer <id> ["<text>"] [--approve | --refuse | --part-of-task | --unrelated]
                                     answer the task's question (NEEDS_HELP, a block, a command nobody could
                                     approve); it resumes from its checkpoint with the answer pinned. Without
                                     text a terminal asks for it. --approve / --refuse: the command it waits on.
                                     --part-of-task / --unrelated: whether the tests it asks about (failing since
                                     its base) are its to fix, or known failures it may land without
  task council <id> [--note "<text>"]
                                     convene the bug council on the task's history; its plan is the task's next
                                     iteration's first feedback (needs the model, like run)
  review list [--json]               tasks waiting for review (merge.review: manual), with what was checked
  review diff <id> [--stat]          exactly what would land on the target's tip (or, for any other task, what
                                     it landed or what its worktree holds now), as a unified diff
  review approve <id>                land it: as checked while the target has not moved, else re-checked on the
                                     new tip; while a run holds the workspace, that run lands it
  review changes <id> "<text>"       send it back to its agent with the feedback pinned in its next context
  review reject <id> [--yes]         drop its branch and worktree; the task is cancelled
        Exit codes: 0 done · 1 not done (did not land, conflict) · 2 usage, unknown task or status
        · 4 not confirmed`;

export type PersonCommand =
  | { kind: 'task.answer'; workspace: string; taskId: string; text?: string; approved?: boolean; verdict?: 'part' | 'unrelated' }
  | { kind: 'task.council'; workspace: string; taskId: string; note?: string }
  | { kind: 'review.list'; workspace: string; json: boolean }
  | { kind: 'review.diff'; workspace: string; taskId: string; stat: boolean }
  | { kind: 'review.approve'; workspace: string; taskId: string }
  | { kind: 'review.changes'; workspace: string; taskId: string; text: string }
  | { kind: 'review.reject'; workspace: string; taskId: string; yes: boolean };

export class PersonUsageError extends Error {}

const OPTIONS = {
  workspace: { type: 'string' },
  approve: { type: 'boolean' },
  refuse: { type: 'boolean' },
  'part-of-task': { type: 'boolean' },
  unrelated: { type: 'boolean' },
  note: { type: 'string' },
  json: { type: 'boolean' },
  stat: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
} as const;

const ALLOWED: Record<string, (keyof typeof OPTIONS)[]> = {
  'task answer': ['approve', 'refuse', 'part-of-task', 'unrelated'],
  'task council': ['note'],
  'review list': ['json'],
  'review diff': ['stat'],
  'review approve': [],
  'review changes': [],
  'review reject': ['yes'],
};

/** The person's command `argv` names, or undefined when it is another command. */
export function parsePersonCommand(argv: readonly string[], cwd: string): PersonCommand | undefined {
  const loose = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: false });
  const [command, sub] = loose.positionals;
  const verb = `${command} ${sub ?? ''}`;
  if (command === 'review' && !(verb in ALLOWED))
    throw new PersonUsageError(`unknown review command "${sub ?? ''}": use review list, diff, approve, changes or reject`);
  if (!(verb in ALLOWED)) return undefined;
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new PersonUsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const extra = Object.keys(values).filter((key) => key !== 'workspace' && !ALLOWED[verb].includes(key as keyof typeof OPTIONS));
  if (extra.length > 0) throw new PersonUsageError(`option ${extra.map((k) => `--${k}`).join(', ')} does not apply to ${verb}`);
  const workspace = values.workspace ?? cwd;
  if (verb === 'review list') {
    if (positionals.length > 2) throw new PersonUsageError(`unexpected argument "${positionals[2]}"`);
    return { kind: 'review.list', workspace, json: values.json ?? false };
  }
  const taskId = positionals[2];
  if (!taskId) throw new PersonUsageError(`${verb} needs a task id: ralph ${verb} <id>`);
  const rest = positionals.slice(3);
  const oneText = (what: string): string | undefined => {
    if (rest.length > 1) throw new PersonUsageError(`${verb} takes one ${what}; quote it: ralph ${verb} ${taskId} "<${what}>"`);
    return rest[0];
  };
  switch (verb) {
    case 'task answer': {
      const given = (['approve', 'refuse', 'part-of-task', 'unrelated'] as const).filter((k) => values[k]);
      if (given.length > 1)
        throw new PersonUsageError(`give ${given.map((k) => `--${k}`).join(' or ')}, not ${given.length === 2 ? 'both' : 'several'}`);
      const text = oneText('answer');
      const approved = values.approve ? true : values.refuse ? false : undefined;
      const verdict = values['part-of-task'] ? 'part' : values.unrelated ? 'unrelated' : undefined;
      return {
        kind: 'task.answer',
        workspace,
        taskId,
        ...(text !== undefined ? { text } : {}),
        ...(approved !== undefined ? { approved } : {}),
        ...(verdict !== undefined ? { verdict } : {}),
      };
    }
    case 'task council':
      if (rest.length > 0) throw new PersonUsageError(`unexpected argument "${rest[0]}" (a note goes in --note "<text>")`);
      return { kind: 'task.council', workspace, taskId, ...(values.note ? { note: values.note } : {}) };
    case 'review diff':
      if (rest.length > 0) throw new PersonUsageError(`unexpected argument "${rest[0]}"`);
      return { kind: 'review.diff', workspace, taskId, stat: values.stat ?? false };
    case 'review approve':
      if (rest.length > 0) throw new PersonUsageError(`unexpected argument "${rest[0]}"`);
      return { kind: 'review.approve', workspace, taskId };
    case 'review changes': {
      const text = oneText('feedback');
      if (!text?.trim()) throw new PersonUsageError(`review changes needs the feedback: ralph review changes ${taskId} "<what to change>"`);
      return { kind: 'review.changes', workspace, taskId, text };
    }
    default:
      if (rest.length > 0) throw new PersonUsageError(`unexpected argument "${rest[0]}"`);
      return { kind: 'review.reject', workspace, taskId, yes: values.yes ?? false };
  }
}
