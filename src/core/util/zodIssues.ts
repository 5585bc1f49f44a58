import type { z } from 'zod';

/**
 * One line per issue: `llm.models: expected array, received string`. An unknown key names its
 * full path and, when `schema` is given, the closest known key at that place
 * (`loop.maxIteration: unknown key; did you mean loop.maxIterations?`).
 */
export function formatZodIssues(error: z.ZodError, prefix = '', schema?: z.ZodType): string[] {
  return error.issues.flatMap((issue) => {
    const where = [prefix, ...issue.path.map(String)].filter(Boolean);
    if (issue.code === 'unrecognized_keys') {
      const known = schema ? knownKeysAt(schema, issue.path) : [];
      return issue.keys.map((key) => {
        const full = [...where, key].join('.');
        const guess = closest(key, known);
        const hint = guess
          ? `; did you mean ${[...where, guess].join('.')}?`
          : known.length > 0
            ? `; known keys here: ${known.join(', ')}`
            : '';
        return `${full}: unknown key${hint}`;
      });
    }
    return [`${where.join('.') || '(root)'}: ${issue.message}`];
  });
}

/** The keys an object schema accepts at `path` (array indexes and record keys walk through). */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let node: unknown = unwrap(schema);
  for (const step of path) {
    const def = defOf(node);
    if (!def) return [];
    if (def.type === 'object') node = unwrap((def.shape as Record<string, unknown>)[String(step)]);
    else if (def.type === 'array') node = unwrap(def.element);
    else if (def.type === 'record') node = unwrap(def.valueType);
    else return [];
  }
  const def = defOf(node);
  return def?.type === 'object' ? Object.keys(def.shape as Record<string, unknown>) : [];
}

function defOf(node: unknown): Record<string, unknown> | undefined {
  return (node as { _zod?: { def?: Record<string, unknown> } } | undefined)?._zod?.def;
}

/** Sees through default / prefault / optional / nullable / pipe wrappers to the schema inside. */
function unwrap(node: unknown): unknown {
  for (let depth = 0; depth < 20; depth++) {
    const def = defOf(node);
    if (!def) return node;
    if (def.innerType) node = def.innerType;
    else if (def.type === 'pipe' && def.in) node = def.in;
    else return node;
  }
  return node;
}

/** The known key nearest to `key` by edit distance (case-insensitive), when it is plausibly a typo. */
export function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Math.abs(a.length - b.length) + 64;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}
