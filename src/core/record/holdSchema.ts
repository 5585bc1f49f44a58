import { z } from 'zod';

/**
 * A checked result held for a person (DESIGN §7, status `review`): the merge queue merged the
 * task's branch onto `base` (the target's tip then) as `result` and its required gates passed
 * there; with `merge.review: "manual"` — or after a merge waited too long for the person's own
 * files — it lands only once approved. Kept in the task's checkpoint; the commit is kept alive
 * by the ref `refs/ralph/review/<taskId>`.
 */
export const ReviewHoldSchema = z.object({
  target: z.string(),
  base: z.string(),
  result: z.string(),
  /** The task branch's tip the result was made from. */
  branchTip: z.string().optional(),
  gates: z.array(z.object({ name: z.string(), passed: z.boolean(), summary: z.string() })).default([]),
  heldAt: z.string(),
  /** Why it waits, in words (manual review; or the person's files that were in the way). */
  reason: z.string(),
  /** The person's files that kept the merge from landing, when that is why it waits. */
  files: z.array(z.string()).optional(),
  /** Set by Approve: the next run's queue (or the approval itself, when no run holds the workspace) lands it. */
  approvedAt: z.string().optional(),
});
export type ReviewHold = z.infer<typeof ReviewHoldSchema>;

/** The ref that keeps a held result alive (no branch points at it until it lands). */
export function reviewRef(taskId: string): string {
  return `refs/ralph/review/${taskId}`;
}
