import { createWriteStream, promises as fs, type WriteStream } from 'node:fs';
import * as path from 'node:path';

/**
 * The full output of one gate run, streamed to disk as it arrives: the model and the report
 * only see capped excerpts (GATE_TEXT_LIMITS), so the log is where a human reads the rest.
 */
export class GateLog {
  private stream: WriteStream | undefined;
  private failed = false;
  private wrote = false;

  private constructor(readonly file: string) {}

  /** `<dir>/iteration-<n>-<gate>.log`; the gate name is reduced to safe file-name characters. */
  static async open(dir: string, iteration: number | undefined, gate: string): Promise<GateLog | undefined> {
    const safe = gate.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'gate';
    const log = new GateLog(path.join(dir, `iteration-${iteration ?? 0}-${safe}.log`));
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
    this.stream.write(chunk);
  }

  /** Closes the file; a runner that streamed nothing (e.g. the editor's task API) gets its captured output written. */
  async close(capturedOutput: string): Promise<string | undefined> {
    if (!this.stream) return undefined;
    if (!this.wrote && capturedOutput) this.stream.write(capturedOutput);
    const stream = this.stream;
    await new Promise<void>((resolve) => stream.end(resolve));
    return this.failed ? undefined : this.file;
  }
}
