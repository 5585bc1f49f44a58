import type { PlanDraft } from './planSchema';

/** The proposed plan as a terminal shows it: every field that will be saved, and what to look at. */
export function formatPlan(draft: PlanDraft, problems: readonly string[]): string {
  const out: string[] = [
    `Plan of ${draft.document}${draft.section ? ` (section "${draft.section}")` : ''}: ${draft.tasks.length} task${draft.tasks.length === 1 ? '' : 's'} proposed by ${draft.model}`,
  ];
  draft.tasks.forEach((task, index) => {
    const titleOf = (key: string) => draft.tasks.find((t) => t.key === key)?.title;
    const after = task.dependsOn.map((d) => (titleOf(d) ? `${d} ("${titleOf(d)}")` : d));
    out.push('');
    out.push(`${String(index + 1).padStart(2)}. ${task.title}  [${task.key}]`);
    out.push(`    ${task.type} · complexity ${task.complexity} · from ${task.source}`);
    out.push(field('request', task.prompt));
    out.push(field('promise', task.promise));
    out.push(field('check', task.check ?? '— (none)'));
    if (after.length > 0) out.push(field('after', after.join(', ')));
    for (const note of task.notes) out.push(field('note', note));
  });
  if (draft.notes) out.push('', field('model notes', draft.notes).trimStart());
  if (problems.length > 0) out.push('', 'Cannot be accepted as it is:', ...problems.map((p) => `  ✗ ${p}`));
  return out.join('\n');
}

function field(name: string, text: string): string {
  const label = `    ${`${name}:`.padEnd(9)}`;
  return text
    .trim()
    .split('\n')
    .map((line, i) => (i === 0 ? `${label}${line}` : `${' '.repeat(label.length)}${line}`))
    .join('\n');
}
