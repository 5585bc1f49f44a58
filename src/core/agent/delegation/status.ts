import type { DelegationStatus, ToolEvidence } from './types';

/**
 * The status table of the delegation protocol, with no model call:
 *
 * | condition                                                              | status      |
 * | ---------------------------------------------------------------------- | ----------- |
 * | the sub-agent called `escalate`                                        | `escalated` |
 * | no evidence and an empty answer                                        | `failed`    |
 * | no failures (pending approvals are not failures), at least one success | `success`   |
 * | successes and failures                                                 | `partial`   |
 * | only failures                                                          | `failed`    |
 * | no evidence but an answer                                              | `success`   |
 *
 * One case the table leaves open: evidence made only of pending approvals (nothing failed,
 * nothing done yet). That is `partial`: not a failure, but the objective is not met until a
 * human approves.
 */
export function deriveStatus(evidence: readonly ToolEvidence[], escalated: boolean, answer: string): DelegationStatus {
  if (escalated) return 'escalated';
  const hasAnswer = answer.trim() !== '';
  if (evidence.length === 0) return hasAnswer ? 'success' : 'failed';
  const successes = evidence.filter((e) => e.success).length;
  const failures = evidence.filter((e) => !e.success && !e.pendingApproval).length;
  if (failures === 0 && successes > 0) return 'success';
  if (successes > 0 && failures > 0) return 'partial';
  if (failures > 0) return 'failed';
  return 'partial';
}

/** Missing evidence, a scout's low confidence or invalid findings make a result at most partial. */
export function atMostPartial(status: DelegationStatus): DelegationStatus {
  return status === 'success' ? 'partial' : status;
}
