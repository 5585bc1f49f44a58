/**
 * The verbs of `ralph`, once: the one definition (verbSpec.ts says its shape) from which the
 * parser (args.ts, on commander), `ralph --help` and each verb's page (help.ts), completion
 * (completion.ts) and docs/cli.md (scripts/docs/reference.mjs) are made; and the closest verb to
 * a mistyped one.
 */
import { RUN_VERBS } from './verbsRun';
import { SETUP_VERBS } from './verbsSetup';
import { TASK_VERBS } from './verbsTasks';
import type { Verb } from './verbSpec';

export { SHELLS, type Shell } from './command';
export { GROUPS, type Verb } from './verbSpec';

/** Every verb, in the order of `ralph --help` within each group. */
export const VERBS: readonly Verb[] = [
  ...TASK_VERBS,
  ...RUN_VERBS.filter((v) => v.name === 'plan'),
  ...RUN_VERBS.filter((v) => v.name !== 'plan'),
  ...SETUP_VERBS,
];

/** The verb named `name` (`task retry`), if there is one. */
export const verbNamed = (name: string): Verb | undefined => VERBS.find((v) => v.name === name);

/** The verbs' first words (`task`, `run`…), and for those with sub-verbs, the second words. */
export function verbWords(): Map<string, string[]> {
  const words = new Map<string, string[]>();
  for (const { name } of VERBS) {
    const [first, second] = name.split(' ');
    const subs = words.get(first) ?? [];
    if (second) subs.push(second);
    words.set(first, subs);
  }
  return words;
}

/**
 * The verb `argv` names, from its leading words (options first are not looked through):
 * `{ verb }` when known, `{ unknown, suggestion }` when a word is not a verb, undefined when
 * argv does not start with a word.
 */
export function verbOf(argv: readonly string[]): { verb: string } | { unknown: string; within?: string; suggestion?: string } | undefined {
  const [first, second] = argv;
  if (first === undefined || first.startsWith('-')) return undefined;
  const words = verbWords();
  const subs = words.get(first);
  if (!subs) return { unknown: first, suggestion: closest(first, [...words.keys()]) };
  if (subs.length === 0) return { verb: first };
  // `task` with no sub-verb, or an option next: the family's own parser says what is missing
  if (second === undefined || second.startsWith('-')) return { verb: first };
  if (subs.includes(second)) return { verb: `${first} ${second}` };
  return { unknown: second, within: first, suggestion: closest(second, subs) };
}

/** The verb closest to `word` (a typo, a prefix), if any is close enough to be what was meant. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = name.startsWith(word) && word.length >= 2 ? 1 : editDistance(word, name);
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(best.name.length / 3)) ? best.name : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length];
}
