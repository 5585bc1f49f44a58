/** Parses JSON and, on failure, says where (line and column) in terms a person can act on. */
export function parseJsonWithLocation(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const message = (error as Error).message;
    const position = /position (\d+)/.exec(message);
    if (position) {
      const offset = Number(position[1]);
      const before = text.slice(0, offset);
      const line = before.split('\n').length;
      const column = offset - before.lastIndexOf('\n');
      return { ok: false, message: `invalid JSON at line ${line}, column ${column}: ${message}` };
    }
    return { ok: false, message: `invalid JSON: ${message}` };
  }
}
