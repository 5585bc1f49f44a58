/**
 * Whether a git call starts the helper process (gitHost.ts) when none runs: from the first call
 * (the editor), or only once a run asked (the CLI). Apart from gitHost.ts so the CLI can say so
 * at its start without loading git's modules (simple-git) for a verb that makes no git call.
 */
let wanted = true;

/** Whether a call starts the helper when none runs. */
export const gitHostWanted = (): boolean => wanted;

/** A call starts the helper from now on (`startGitHost`). */
export function wantGitHost(): void {
  wanted = true;
}

/**
 * From now on the helper starts only when `startGitHost` asks (a run): until then, and for a
 * process that never asks, git is started directly from this process (the CLI's short verbs).
 * A helper that runs already is still used.
 */
export function gitHostWhenAsked(): void {
  wanted = false;
}
