import * as vscode from 'vscode';
import { errorMessage } from '../core/errors';
import { DRAFT_INSTRUCTIONS, draftFromText, readTaskDraft, type TaskDraft } from '../core/intake/taskDraft';
import type { ChatOutput } from './chatRecorder';

/** The conversation before this request, as plain text (the latest turns, bounded). */
function historyText(context: vscode.ChatContext): string {
  const turns = context.history.slice(-10).map((turn) => {
    if (turn instanceof vscode.ChatRequestTurn) return `Person: ${turn.command ? `/${turn.command} ` : ''}${turn.prompt}`;
    const text = turn.response.map((part) => (part instanceof vscode.ChatResponseMarkdownPart ? part.value.value : '')).join('');
    return `Assistant: ${text}`;
  });
  const text = turns.join('\n\n');
  return text.length > 12_000 ? text.slice(-12_000) : text;
}

/** The task the chat's own model drafts from the conversation; without a usable reply, the request as typed. */
async function draftTask(
  model: vscode.LanguageModelChat | undefined,
  context: vscode.ChatContext,
  prompt: string,
  token: vscode.CancellationToken,
): Promise<{ draft: TaskDraft; note?: string }> {
  const fallback = (note: string) => ({
    draft: draftFromText(
      prompt ||
        historyText(context)
          .split('\n')
          .filter((l) => l.startsWith('Person: '))
          .at(-1)
          ?.slice(8) ||
        'New task',
    ),
    note,
  });
  if (!model) return fallback('no chat model was selected, so the request is the task as you typed it');
  const history = historyText(context);
  const message = `${DRAFT_INSTRUCTIONS}\n\n${history ? `Conversation so far:\n${history}\n\n` : ''}Request:\n${prompt || '(the request is in the conversation above)'}`;
  try {
    const response = await model.sendRequest(
      [vscode.LanguageModelChatMessage.User(message)],
      { justification: 'Ralph drafts a task from this conversation.' },
      token,
    );
    let text = '';
    for await (const chunk of response.text) text += chunk;
    const draft = readTaskDraft(text);
    return draft ? { draft } : fallback(`${model.name}'s reply held no task, so the request is the task as you typed it`);
  } catch (error) {
    return fallback(`${model.name} could not draft it (${errorMessage(error)}), so the request is the task as you typed it`);
  }
}

export function draftMarkdown(draft: TaskDraft): string {
  const quote = (text: string) =>
    text
      .split('\n')
      .map((l) => `> ${l}`)
      .join('\n');
  return [
    `**${draft.title}**${draft.type ? ` · ${draft.type}` : ''}`,
    `Request:\n${quote(draft.prompt)}`,
    draft.promise
      ? `Promise:\n${quote(draft.promise)}`
      : 'Promise: _the conversation states no completion criteria — you will be asked for them when you add it._',
    draft.check ? `Check: \`${draft.check}\`` : '',
  ]
    .filter(Boolean)
    .join('\n\n');
}

/** `/add`: a task drafted from the conversation, added only from the button the person clicks. */
export async function chatAdd(
  request: Pick<vscode.ChatRequest, 'prompt' | 'model'>,
  context: vscode.ChatContext,
  stream: ChatOutput,
  token: vscode.CancellationToken,
): Promise<TaskDraft | undefined> {
  if (!request.prompt.trim() && context.history.length === 0) {
    stream.markdown('What should Ralph do? For example: `@ralph /add make the cart survive a page reload; done when the cart tests pass`.');
    return undefined;
  }
  stream.progress('Drafting the task…');
  const { draft, note } = await draftTask(request.model, context, request.prompt.trim(), token);
  stream.markdown(
    `Here is the task${note ? ` (${note})` : ''}:\n\n${draftMarkdown(draft)}\n\nNothing is added until you click **Add Task**.`,
  );
  stream.button({ command: 'ralph.addTask', title: 'Add Task', arguments: [draft] });
  return draft;
}
