/**
 * Batches the model's inputs for the webview: one `inputs` message per short interval instead
 * of one per event, adjacent streamed text joined, and — when the webview falls far behind —
 * a fresh snapshot instead of an ever-growing queue. No `vscode` import.
 */
import type { PanelInput } from '../../protocol/panelInput';

export interface BatchSink {
  inputs(batch: { fromSeq: number; toSeq: number; inputs: PanelInput[] }): void;
  /** Send a snapshot; the owner then calls `reset` with its sequence number. */
  snapshot(): void;
}

export interface BatcherOptions {
  /** How long inputs gather before they are sent (default 25 ms). */
  delayMs: number;
  /** Pending inputs beyond this are dropped for a snapshot (default 5,000). */
  maxPending: number;
  /** Inputs per message at most (default 1,000). */
  maxBatch: number;
}

interface Item {
  seq: number;
  input: PanelInput;
}

export class InputBatcher {
  private items: Item[] = [];
  private nextFrom = 1;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private overflowed = false;
  private readonly options: BatcherOptions;

  constructor(
    private readonly sink: BatchSink,
    options: Partial<BatcherOptions> = {},
  ) {
    this.options = { delayMs: 25, maxPending: 5000, maxBatch: 1000, ...options };
  }

  /** Inputs waiting to be sent. */
  get pending(): number {
    return this.items.length;
  }

  /** A snapshot at `seq` was sent: it covers everything up to `seq`. */
  reset(seq: number): void {
    this.items = [];
    this.nextFrom = seq + 1;
    this.overflowed = false;
    this.cancel();
  }

  push(seq: number, input: PanelInput): void {
    if (seq < this.nextFrom) return;
    if (!this.overflowed) {
      const last = this.items[this.items.length - 1];
      const joined = last ? join(last.input, input) : undefined;
      if (joined) this.items[this.items.length - 1] = { seq, input: joined };
      else this.items.push({ seq, input });
      if (this.items.length > this.options.maxPending) {
        this.overflowed = true;
        this.items = [];
      }
    }
    this.timer ??= setTimeout(() => this.flush(), this.options.delayMs);
  }

  /** Sends what is pending now. */
  flush(): void {
    this.cancel();
    if (this.overflowed) {
      this.overflowed = false;
      this.sink.snapshot();
      return;
    }
    while (this.items.length > 0) {
      const chunk = this.items.splice(0, this.options.maxBatch);
      const toSeq = chunk[chunk.length - 1].seq;
      this.sink.inputs({ fromSeq: this.nextFrom, toSeq, inputs: chunk.map((item) => item.input) });
      this.nextFrom = toSeq + 1;
    }
  }

  dispose(): void {
    this.cancel();
    this.items = [];
  }

  private cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Adjacent text of one conversation is one input (the reducer appends either way). */
function join(a: PanelInput, b: PanelInput): PanelInput | undefined {
  if (a.type !== 'model.delta' || b.type !== 'model.delta') return undefined;
  if (a.taskId !== b.taskId || a.iteration !== b.iteration || a.agent !== b.agent) return undefined;
  return { ...a, text: a.text + b.text };
}
