import type { ProofRecord } from '../gates/proof';
import { list } from './markdown';

/** The fail-to-pass proof as the iteration and final reports show it. */
export function proofSection(proof: ProofRecord): string {
  const lines = [`**${proof.status === 'proven' ? 'Proven' : 'Not proven'}** — ${proof.reason}.`];
  if (proof.files.length) lines.push(`Test files the task added or changed: ${proof.files.map((f) => `\`${f}\``).join(', ')}`);
  if (proof.tests.length)
    lines.push(
      `Failing on the base code (and passing on the result):\n${list(proof.tests.map((t) => `\`${t.name}\`${t.baseFailure ? ` — ${t.baseFailure}` : ''}`))}`,
    );
  if (proof.passingOnBase.length)
    lines.push(`Passing on the base code too (they prove nothing):\n${list(proof.passingOnBase.map((n) => `\`${n}\``))}`);
  return `## Fail-to-pass proof\n${lines.join('\n\n')}`;
}
