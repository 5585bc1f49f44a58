import { Worker } from 'node:worker_threads';

/**
 * Runs a model-written regular expression over text in a worker thread, so a pattern with
 * catastrophic backtracking (`^(a+)+$`) costs a bounded amount of time and never blocks the
 * event loop: the deadline, Ctrl-C and the task timeout keep working, and the worker is
 * terminated when any of them fires.
 */

/** How long one search's regular expression may run in total. */
export const REGEX_DEADLINE_MS = 10_000;

export interface LineMatch {
  file: number;
  line: number;
  text: string;
}

export type RegexSearchOutcome =
  { kind: 'done'; total: number; matches: LineMatch[] } | { kind: 'timeout' } | { kind: 'aborted' } | { kind: 'error'; message: string };

// Plain CommonJS evaluated by the worker: no file to locate after bundling.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re = new RegExp(workerData.source, workerData.flags);
parentPort.on('message', ({ texts, keep, clip }) => {
  const matches = [];
  let total = 0;
  texts.forEach((text, file) => {
    if (typeof text !== 'string') return;
    const lines = text.split('\\n');
    for (let n = 0; n < lines.length; n++) {
      if (!re.test(lines[n])) continue;
      total++;
      if (matches.length < keep) {
        const line = lines[n].replace(/\\r$/, '');
        matches.push({ file, line: n + 1, text: line.length > clip ? line.slice(0, clip) + '…' : line });
      }
    }
  });
  parentPort.postMessage({ total, matches });
});
`;

export interface RegexSearch {
  /** Scans one batch of texts (undefined entries are skipped). */
  scan(texts: (string | undefined)[], keep: number, clip: number): Promise<RegexSearchOutcome>;
  close(): Promise<void>;
}

export function startRegexSearch(source: string, signal: AbortSignal, deadlineMs = REGEX_DEADLINE_MS): RegexSearch {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { source, flags: '' },
    resourceLimits: { maxOldGenerationSizeMb: 256 },
  });
  worker.unref();
  const deadline = Date.now() + deadlineMs;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await worker.terminate();
  };
  return {
    close,
    scan(texts, keep, clip) {
      if (closed) return Promise.resolve({ kind: 'error', message: 'search already stopped' });
      return new Promise<RegexSearchOutcome>((resolve) => {
        // eslint-disable-next-line prefer-const -- finish() may run (on an aborted signal) before the timer is set
        let timer: NodeJS.Timeout | undefined;
        const finish = (outcome: RegexSearchOutcome, stop: boolean) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
          if (stop) void close();
          resolve(outcome);
        };
        const onMessage = (m: { total: number; matches: LineMatch[] }) =>
          finish({ kind: 'done', total: m.total, matches: m.matches }, false);
        const onError = (error: Error) => finish({ kind: 'error', message: error.message }, true);
        const onExit = () => finish({ kind: 'error', message: 'the search worker stopped' }, false);
        const onAbort = () => finish({ kind: 'aborted' }, true);
        if (signal.aborted) return finish({ kind: 'aborted' }, true);
        timer = setTimeout(() => finish({ kind: 'timeout' }, true), Math.max(0, deadline - Date.now()));
        signal.addEventListener('abort', onAbort, { once: true });
        worker.on('message', onMessage);
        worker.on('error', onError);
        worker.on('exit', onExit);
        worker.postMessage({ texts, keep, clip });
      });
    },
  };
}
