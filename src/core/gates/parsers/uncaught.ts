/**
 * The error a process ended with, as Node reports an uncaught one: the `file:line` where it was
 * thrown, an excerpt with a caret, a blank line, `TypeError: message` (or `AssertionError
 * [ERR_ASSERTION]: …`), its stack. For a suite whose output is not read (a `node test.js` script
 * of asserts), it is what the failure was and where; the last lines of the output are Node's dump
 * of the error's fields and its internal frames. Undefined when the output holds no such report.
 */
const ERROR_LINE = /^(?:Uncaught )?[A-Z]\w*(?:Error|Exception)\b(?: \[[A-Z_]+\])?: \S/;
/** An error's message, its own lines (an assertion's diff) with it, is cut after this many lines. */
const MESSAGE_LINES = 12;
const FRAME = /^\s+at (?:.*\()?(.+?):\d+:\d+\)?\s*$/;

export function uncaughtError(output: string): string | undefined {
  const lines = output.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!ERROR_LINE.test(lines[i])) continue;
    // its message may take lines of its own (an assertion's diff): the stack comes after them
    let at = i + 1;
    while (at < lines.length && at < i + 40 && !FRAME.test(lines[at])) at++;
    if (!FRAME.test(lines[at] ?? '')) continue;
    const stack = at;
    const frames: string[] = [];
    for (; at < lines.length && FRAME.test(lines[at]); at++) frames.push(lines[at].trim());
    const own = frames.find((f) => !/(?:^at |\()(?:node:|internal[\\/])|[\\/]node_modules[\\/]/.test(f));
    const message = lines.slice(i, Math.min(stack, i + MESSAGE_LINES)).map((l) => l.trimEnd().slice(0, 400));
    return [...message, ...(own ? [`    ${own}`] : [])].join('\n');
  }
  return undefined;
}
