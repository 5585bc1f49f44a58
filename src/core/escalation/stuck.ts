/** The facts of one iteration that stuck detection compares, taken from the checkpointed history. */
export interface IterationFingerprint {
  iteration: number;
  filesChanged: readonly string[];
  failingTests: readonly string[];
  error?: string;
  failed: boolean;
}

export interface StuckVerdict {
  stuck: boolean;
  reason?: string;
}

/** Iterations in a row that make a pattern. */
export const STUCK_WINDOW = 3;

/**
 * Stuck when, over the last three failed iterations, the same set of files was modified, the
 * same tests failed, or the same error came back. Works across fresh contexts and resumes
 * because it reads the checkpointed history, not the model's memory.
 */
export function detectStuck(history: readonly IterationFingerprint[], window = STUCK_WINDOW): StuckVerdict {
  const recent = history.slice(-window);
  if (recent.length < window || recent.some((r) => !r.failed)) return { stuck: false };
  const same = (pick: (r: IterationFingerprint) => string) => {
    const first = pick(recent[0]);
    return first !== '' && recent.every((r) => pick(r) === first);
  };
  if (same((r) => [...r.failingTests].sort().join('\n'))) {
    return { stuck: true, reason: `the same failing tests ${window} iterations running: ${recent[0].failingTests.slice(0, 5).join(', ')}` };
  }
  if (same((r) => normalizeError(r.error)))
    return { stuck: true, reason: `the same error ${window} iterations running: ${recent[0].error?.slice(0, 200)}` };
  if (same((r) => [...r.filesChanged].sort().join('\n'))) {
    return {
      stuck: true,
      reason: `the same files modified ${window} iterations running: ${recent[0].filesChanged.slice(0, 5).join(', ')}`,
    };
  }
  return { stuck: false };
}

/** Errors differ in ids, times and numbers from one run to the next; compare their shape. */
function normalizeError(error: string | undefined): string {
  if (!error) return '';
  return error
    .replace(/\b[0-9a-f]{8,}\b/gi, '#')
    .replace(/\d+/g, 'N')
    .replace(/\s+/g, ' ')
    .trim();
}
