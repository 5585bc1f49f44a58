import { createWriteStream, promises as fs, type WriteStream } from 'node:fs';
import * as path from 'node:path';

/** The default cap of one gate log: `reports.logMaxKb` (1 MiB). */
export const DEFAULT_LOG_MAX_BYTES = 1024 * 1024;

/**
 * The output of one gate run, streamed to disk as it arrives: the model and the report only see
 * capped excerpts (GATE_TEXT_LIMITS), so the log is where a human reads the rest. A log keeps at
 * most `maxBytes`: the first quarter of the output as it comes (the command, its start-up
 * errors) and the last three quarters (the failures and the summary test runners print at the
 * end), with one line between them saying how much was left out. The editor's terminal still
 * shows the whole output.
 */
export class GateLog {
  private stream: WriteStream | undefined;
  private failed = false;
  private wrote = false;
  private headLeft: number;
  private readonly tailMax: number;
  /** The latest output past the head, newest last; trimmed to `tailMax` bytes. */
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private dropped = 0;

  private constructor(
    readonly file: string,
    private readonly maxBytes: number,
  ) {
    this.headLeft = Math.floor(maxBytes / 4);
    this.tailMax = maxBytes - this.headLeft;
  }

  /** `<dir>/iteration-<n>-<gate>.log`; the gate name is reduced to safe file-name characters. */
  static async open(
    dir: string,
    iteration: number | undefined,
    gate: string,
    maxBytes = DEFAULT_LOG_MAX_BYTES,
  ): Promise<GateLog | undefined> {
    const safe = gate.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'gate';
    const log = new GateLog(path.join(dir, `iteration-${iteration ?? 0}-${safe}.log`), Math.max(1024, maxBytes));
    try {
      await fs.mkdir(dir, { recursive: true });
      log.stream = createWriteStream(log.file, { flags: 'w' });
      log.stream.on('error', () => {
        log.failed = true;
      });
      return log;
    } catch {
      return undefined; // no log is a loss of detail, never a reason to fail the gate
    }
  }

  write(chunk: string): void {
    if (this.failed || !this.stream) return;
    this.wrote = true;
    let bytes = Buffer.from(chunk, 'utf8');
    if (this.headLeft > 0) {
      const head = bytes.subarray(0, this.headLeft);
      this.stream.write(head);
      this.headLeft -= head.length;
      bytes = bytes.subarray(head.length);
    }
    if (bytes.length === 0) return;
    this.tail.push(bytes);
    this.tailBytes += bytes.length;
    while (this.tailBytes > this.tailMax) {
      const first = this.tail[0];
      const over = this.tailBytes - this.tailMax;
      if (first.length <= over) {
        this.tail.shift();
        this.tailBytes -= first.length;
        this.dropped += first.length;
      } else {
        this.tail[0] = first.subarray(over);
        this.tailBytes -= over;
        this.dropped += over;
      }
    }
  }

  /** Closes the file; a runner that streamed nothing (e.g. the editor's task API) gets its captured output written. */
  async close(capturedOutput: string): Promise<string | undefined> {
    if (!this.stream) return undefined;
    if (!this.wrote && capturedOutput) this.write(capturedOutput);
    const stream = this.stream;
    if (this.dropped > 0)
      stream.write(
        `\n… [${this.dropped} bytes of output left out here: a gate log keeps its first and last part, ${this.maxBytes} bytes in all (reports.logMaxKb)] …\n`,
      );
    for (const part of this.tail) stream.write(part);
    this.tail = [];
    await new Promise<void>((resolve) => stream.end(resolve));
    return this.failed ? undefined : this.file;
  }
}
