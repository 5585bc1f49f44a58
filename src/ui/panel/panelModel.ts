/**
 * The host's copy of the progress panel's model. It follows the event bus whether or not the
 * panel is open, so opening (or reopening) the panel shows the same state at once; every
 * input that changes the model gets the next sequence number and goes to the subscribers (the
 * open panel's batcher). No `vscode` import: unit-tested in plain Node.
 */
import type { RalphConfig } from '../../core/config/schema';
import type { RalphEvent } from '../../core/events';
import type { PanelInput } from '../../protocol/panelInput';
import { reducePanel } from '../../protocol/panelReducer';
import { emptyPanelState, type PanelState } from '../../protocol/panelState';
import { toPanelEvent } from './toPanelEvent';

export interface PanelChange {
  seq: number;
  input: PanelInput;
}

export type PanelListener = (change: PanelChange) => void;

export class PanelModel {
  private current: PanelState;
  private seqNo = 0;
  private readonly listeners = new Set<PanelListener>();

  constructor(
    /** The prices of the current run's configuration (`llm.prices`), for the cost estimate. */
    private readonly prices: () => RalphConfig['llm']['prices'] = () => ({}),
    initial?: PanelState,
    /** The run's `llm.provider`: the editor's models have no list price (cost unknown, not $0). */
    private readonly provider: () => RalphConfig['llm']['provider'] = () => 'openai',
  ) {
    this.current = initial ?? emptyPanelState();
  }

  get state(): PanelState {
    return this.current;
  }

  /** The sequence number of the last input applied. */
  get seq(): number {
    return this.seqNo;
  }

  subscribe(listener: PanelListener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** A loop event from the bus. */
  ingest(event: RalphEvent): void {
    const input = this.project(event);
    if (input) this.apply(input);
  }

  /** Applies one input; false (and no sequence number used) when it changes nothing. */
  apply(input: PanelInput): boolean {
    const next = reducePanel(this.current, input);
    if (next === this.current) return false;
    this.current = next;
    const change = { seq: ++this.seqNo, input };
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // a broken listener must not stop the model
      }
    }
    return true;
  }

  private project(event: RalphEvent): PanelInput | undefined {
    return toPanelEvent(event, this.prices(), this.provider());
  }
}
