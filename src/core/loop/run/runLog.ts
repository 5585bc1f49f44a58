import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import * as path from 'node:path';
import type { RalphEvent } from '../../events';
import { boundDeep, LOGGED_LINE_MAX } from '../../util/bounded';

/** Events too chatty for the run log (they are still delivered to live listeners). */
const NOT_LOGGED = new Set<RalphEvent['type']>(['model.delta']);

/** Appends every event of a run, one JSON per line, to `.ralph/runs/<runId>.ndjson`. */
export class RunLog {
  private readonly stream: WriteStream;
  private closed = false;

  constructor(readonly file: string) {
    mkdirSync(path.dirname(file), { recursive: true });
    this.stream = createWriteStream(file, { flags: 'a' });
    this.stream.on('error', () => {
      // a full disk must not take the loop down; the live events still flow
    });
  }

  append(event: RalphEvent): void {
    if (this.closed || NOT_LOGGED.has(event.type)) return;
    let line = JSON.stringify(event);
    // a commit of 100,000 files, a 200 kB reason: the live event carries it all, the log a bounded part
    if (line.length > LOGGED_LINE_MAX) line = JSON.stringify(boundDeep(event));
    this.stream.write(`${line}\n`);
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return new Promise((resolve) => this.stream.end(resolve));
  }
}
