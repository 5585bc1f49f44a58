import { setFlagsFromString } from 'node:v8';

/**
 * The V8 options of a `ralph` process, set before the bundle is compiled (the launcher) and again
 * by the bundle run on its own: V8 takes a code cache only under the options it was made with.
 *
 * Memory before speed where the two differ (a whole `ralph run` stays under 150 MB; bench/bigRun.ts).
 * The shell parser's wasm (the bash grammar, 1.3 MB) runs on V8's baseline compiler alone: its
 * tier-up to the optimizing compiler took 45 MB at its peak in every run and made parsing no
 * faster for commands this size (set before any wasm is compiled). The young generation keeps its
 * first size: a burst of short-lived strings (git's list of 100,000 new files) grew it to 32 MB
 * that stayed resident; more, smaller scavenges instead.
 */
export function setProcessFlags(): void {
  setFlagsFromString('--liftoff-only');
  setFlagsFromString('--semi-space-growth-factor=1');
}
