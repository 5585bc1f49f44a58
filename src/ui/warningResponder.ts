import type { WarningAction } from '../protocol/panelState';

/** Carries out the answer to a warning (Continue, Stop, Increase max…); the application supplies it. */
export interface WarningResponder {
  /** False when the warning is no longer open (already answered, or its run ended). */
  run(warningId: string, action: WarningAction): Promise<boolean>;
}
