import { boundList, boundOptionalText, boundText, STORED_FILES_MAX } from '../../util/bounded';
import type { IterationRecord, PendingCommit } from '../../record/checkpoint';

/** Feedback lines kept per record (each bounded like any stored text). */
const FEEDBACK_MAX = 40;
/** Failing test names kept per record (stuck detection compares them; more add nothing). */
const TESTS_MAX = 200;
const TEST_NAME_MAX = 300;

/**
 * An iteration record as the checkpoint and the reports keep it: what the model wrote (signal,
 * summary, error, decision, feedback) bounded, and a file list past 200 names summarized by its
 * head and `filesChangedTotal`. The next iteration is built from it; nothing it needs is lost.
 */
export function boundRecord(record: IterationRecord): IterationRecord {
  const files = boundList(record.filesChanged, STORED_FILES_MAX);
  const tests = boundList(record.failingTests, TESTS_MAX);
  const feedback = boundList(record.feedback, FEEDBACK_MAX);
  return {
    ...record,
    signal: boundOptionalText(record.signal),
    summary: boundOptionalText(record.summary),
    error: boundOptionalText(record.error),
    decision: boundOptionalText(record.decision),
    filesChanged: files.kept,
    ...(files.total !== undefined ? { filesChangedTotal: files.total } : {}),
    failingTests: tests.kept.map((name) => boundText(name, TEST_NAME_MAX)),
    feedback: [
      ...feedback.kept.map((line) => boundText(line)),
      ...(feedback.total ? [`… and ${feedback.total - FEEDBACK_MAX} more feedback lines`] : []),
    ],
    tampering: boundList(record.tampering, FEEDBACK_MAX).kept.map((line) => boundText(line)),
  };
}

/** The write-ahead record of an iteration: the signals' texts and the agent's last words bounded. */
export function boundPending(pending: PendingCommit): PendingCommit {
  const signals = pending.run.signals.map((signal) => {
    switch (signal.kind) {
      case 'BLOCKED':
        return { ...signal, reason: boundText(signal.reason) };
      case 'NEEDS_HELP':
        return { ...signal, question: boundText(signal.question) };
      case 'PROGRESS':
        return { ...signal, note: boundOptionalText(signal.note) };
      case 'COMPLETE':
        return {
          ...signal,
          summary: boundOptionalText(signal.summary),
          promiseEvidence: boundOptionalText(signal.promiseEvidence),
          artifactPaths: signal.artifactPaths ? boundList(signal.artifactPaths).kept : undefined,
        };
    }
  });
  return {
    ...pending,
    run: {
      ...pending.run,
      signals: signals.slice(-50),
      finalText: boundText(pending.run.finalText),
      error: boundOptionalText(pending.run.error),
    },
  };
}
