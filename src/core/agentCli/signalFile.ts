import { promises as fs } from 'node:fs';
import type { Signal } from '../signals/types';

/**
 * The file where `ralph mcp` writes the signals an agent CLI's session gave through its tools
 * (one JSON object per line); the session reads it when the CLI has ended. Its path reaches the
 * server through this variable, set by the session for that one server.
 */
export const SIGNAL_FILE_ENV = 'RALPH_SIGNAL_FILE';

/** Appends one signal (one line: whole lines, so a reader never sees half of one). */
export async function appendSignal(file: string, signal: Signal): Promise<void> {
  await fs.appendFile(file, `${JSON.stringify(signal)}\n`, 'utf8');
}

/** The signals in the file, in order; a missing file or an unreadable line gives none. */
export async function readSignalFile(file: string): Promise<Signal[]> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  const signals: Signal[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const value = JSON.parse(line) as Signal;
      if (value && typeof value === 'object' && typeof value.kind === 'string') signals.push(value);
    } catch {
      // a torn line: the session was killed while the server wrote it
    }
  }
  return signals;
}
