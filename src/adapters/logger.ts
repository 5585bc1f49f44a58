import type * as vscode from 'vscode';
import { formatEvent } from '../core/eventFormat';
import type { RalphEvent } from '../core/events';
import type { Logger } from '../core/ports';

/** The core's Logger port on a LogOutputChannel, plus one line per loop event. */
export class ChannelLogger implements Logger {
  constructor(readonly channel: vscode.LogOutputChannel) {}

  debug(message: string): void {
    this.channel.debug(message);
  }
  info(message: string): void {
    this.channel.info(message);
  }
  warn(message: string): void {
    this.channel.warn(message);
  }
  error(message: string): void {
    this.channel.error(message);
  }

  logEvent(event: RalphEvent): void {
    if (event.type === 'model.delta') return;
    const line = formatEvent(event)?.trim();
    if (!line) {
      this.channel.trace(JSON.stringify(event));
      return;
    }
    if (event.type === 'error') this.channel.error(line);
    else if (event.type === 'warning') this.channel.warn(line);
    else this.channel.info(line);
  }
}
