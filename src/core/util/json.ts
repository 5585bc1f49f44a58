import { type ParseError, parse as parseJsonc, printParseErrorCode } from 'jsonc-parser';

/**
 * Parses strict JSON and, on failure, says where (line and column) in terms a person can act
 * on. JSON.parse gives no position on every Node version, so jsonc-parser locates the error.
 */
export function parseJsonWithLocation(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const errors: ParseError[] = [];
    parseJsonc(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    const first = errors[0];
    if (!first) return { ok: false, message: `invalid JSON: ${(error as Error).message}` };
    const before = text.slice(0, first.offset);
    const line = before.split('\n').length;
    const column = first.offset - before.lastIndexOf('\n');
    return { ok: false, message: `invalid JSON at line ${line}, column ${column}: ${describe(printParseErrorCode(first.error))}` };
  }
}

/** `PropertyNameExpected` → `property name expected`. */
function describe(code: string): string {
  return code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}
