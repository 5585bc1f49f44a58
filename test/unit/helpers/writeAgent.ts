import type { RecordedRequest, Step } from '../../fixtures/scriptedServer';

/** The file and content a task's prompt asks for: `WRITE <file> <<content>>`. */
export function writeInstruction(request: RecordedRequest): { file: string; content: string } {
  const user = (request.body?.messages ?? []).find((m) => m.role === 'user');
  const text = typeof user?.content === 'string' ? user.content : '';
  const match = /WRITE (\S+) <<(.*?)>>/s.exec(text);
  if (!match) throw new Error(`no WRITE instruction: ${text.slice(0, 200)}`);
  return { file: match[1], content: match[2] };
}

/** A scripted agent for `WRITE <file> <<content>>` tasks: writes the file, then completes once the tool answered. */
export const writeAgent: Step = (request) => {
  const { file, content } = writeInstruction(request);
  if ((request.body?.messages ?? []).at(-1)?.role === 'tool')
    return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${file}`, promiseEvidence: `${file} written` } }] };
  return { toolCalls: [{ name: 'write_file', arguments: { path: file, content } }] };
};
