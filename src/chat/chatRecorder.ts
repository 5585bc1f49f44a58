import type * as vscode from 'vscode';

/** What `@ralph` answered one request with, as recorded for the extension's API (the tests read it). */
export interface ChatExchange {
  command: string | undefined;
  prompt: string;
  /** The Markdown it wrote, joined. */
  markdown: string;
  /** The buttons it offered: their titles and commands. */
  buttons: { title: string; command: string; arguments?: unknown[] }[];
  /** The chat model the request came with (the editor's model picker). */
  model?: string;
  /** The handler returned: the answer is complete. */
  done: boolean;
}

/** The stream parts `@ralph` writes: text, progress and command buttons. */
export type ChatOutput = Pick<vscode.ChatResponseStream, 'markdown' | 'progress' | 'button'>;

/** Writes to the chat's stream and keeps what was written (the last few exchanges). */
export class ChatRecorder {
  private readonly exchanges: ChatExchange[] = [];

  get history(): readonly ChatExchange[] {
    return this.exchanges;
  }

  /** The stream to write to, and `finish` to call once the answer is complete. */
  record(request: { command?: string; prompt: string; model?: { id: string } }, stream: ChatOutput): { out: ChatOutput; finish(): void } {
    const exchange: ChatExchange = {
      command: request.command,
      prompt: request.prompt,
      markdown: '',
      buttons: [],
      ...(request.model ? { model: request.model.id } : {}),
      done: false,
    };
    this.exchanges.push(exchange);
    if (this.exchanges.length > 20) this.exchanges.shift();
    const out: ChatOutput = {
      markdown: (value) => {
        exchange.markdown += typeof value === 'string' ? value : value.value;
        return stream.markdown(value);
      },
      progress: (value) => stream.progress(value),
      button: (command) => {
        exchange.buttons.push({
          title: command.title,
          command: command.command,
          ...(command.arguments ? { arguments: command.arguments } : {}),
        });
        return stream.button(command);
      },
    };
    return { out, finish: () => (exchange.done = true) };
  }
}
