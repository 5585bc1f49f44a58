import { faultLabel } from './faults';
import type { FallbackNotice } from './fallbackClient';

/** The warning line of a fallback notice, naming both models. */
export function fallbackMessage(notice: FallbackNotice): string {
  const why = notice.fault ? `${faultLabel(notice.fault)}: ${shorten(notice.reason)}` : shorten(notice.reason);
  switch (notice.kind) {
    case 'switch':
      return `model ${notice.from} is failing (${why}); switched to the fallback ${notice.to}, the primary is probed again in ${notice.cooldownSec ?? 0} s`;
    case 'return':
      return `back on the primary model ${notice.to} (was on the fallback ${notice.from}): ${why}`;
    case 'probe-failed':
      return `the primary is still failing (${why}); staying on the fallback ${notice.from}, next probe in ${notice.cooldownSec ?? 0} s`;
  }
}

function shorten(text: string): string {
  return text.length <= 300 ? text : `${text.slice(0, 300)}…`;
}
