import type { ToolResult } from './types';

/** A successful result; `summary` defaults to the first line of `content`. */
export function okResult(content: string, summary?: string): ToolResult {
  return { ok: true, content, summary: oneLine(summary ?? content) };
}

/** A failed result the model reads and can recover from (never a throw). */
export function errorResult(content: string, summary?: string): ToolResult {
  return { ok: false, content, summary: oneLine(summary ?? content) };
}

/** First line of `text`, shortened to `max` characters, for logs and evidence. */
export function oneLine(text: string, max = 160): string {
  const line = text.split('\n', 1)[0].trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : nouns}`;
}
