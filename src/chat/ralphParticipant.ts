import * as vscode from 'vscode';
import { errorMessage } from '../core/errors';
import { chatAdd } from './chatAdd';
import { chatAnswer, chatPlan, chatReview, chatRun, type ChatServices, chatStatus } from './chatCommands';
import { type ChatOutput, ChatRecorder } from './chatRecorder';

/** The participant's id (package.json `chatParticipants`); people type `@ralph`. */
export const PARTICIPANT_ID = 'ralph-loop.ralph';

const HELP = `I hand work to Ralph Loop, which runs coding tasks in a verified loop in this workspace:
- \`/add <what to do>\` — a task drafted from this conversation (you add it)
- \`/plan [section]\` — tasks planned from the open document or a \`#file\` (you review them)
- \`/status\` — where the tasks and the run stand
- \`/run [task id]\` — run a task, or the autopilot (after you say so)
- \`/answer [task id] <answer>\` — answer a task's waiting question
- \`/review\` — tasks whose finished work awaits your review`;

async function dispatch(
  s: ChatServices,
  request: vscode.ChatRequest,
  context: vscode.ChatContext,
  stream: ChatOutput,
  token: vscode.CancellationToken,
): Promise<vscode.ChatResult> {
  switch (request.command) {
    case 'add':
      return { metadata: { command: 'add', draft: await chatAdd(request, context, stream, token) } };
    case 'plan':
      await chatPlan(s, request, stream);
      return { metadata: { command: 'plan' } };
    case 'status':
      await chatStatus(s, stream);
      return { metadata: { command: 'status' } };
    case 'run':
      await chatRun(s, request.prompt, stream);
      return { metadata: { command: 'run' } };
    case 'answer':
      await chatAnswer(s, request.prompt, stream);
      return { metadata: { command: 'answer' } };
    case 'review':
      await chatReview(s, stream);
      return { metadata: { command: 'review' } };
    default:
      if (!request.prompt.trim()) {
        stream.markdown(HELP);
        return { metadata: { command: 'help' } };
      }
      // free text reads as work to hand over: drafted like /add, added only from its button
      return { metadata: { command: 'add', draft: await chatAdd(request, context, stream, token) } };
  }
}

/**
 * Registers `@ralph`. Every exchange is recorded (the extension's API shows the last ones to
 * the tests); an error is said in the chat, never thrown at the person as a stack.
 */
export function registerRalphParticipant(
  extensionUri: vscode.Uri,
  services: ChatServices | undefined,
): { disposable: vscode.Disposable; recorder: ChatRecorder } {
  const recorder = new ChatRecorder();
  const participant = vscode.chat.createChatParticipant(PARTICIPANT_ID, async (request, context, stream, token) => {
    const { out, finish } = recorder.record(request, stream);
    try {
      if (!services) {
        out.markdown('Ralph Loop needs an open folder on this machine: open one, then ask again.');
        return {};
      }
      return await dispatch(services, request, context, out, token);
    } catch (error) {
      out.markdown(`Ralph could not do that: ${errorMessage(error)}`);
      return { errorDetails: { message: errorMessage(error) }, metadata: { command: request.command } };
    } finally {
      finish();
    }
  });
  participant.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'ralph.svg');
  participant.followupProvider = {
    provideFollowups(result) {
      const command = (result.metadata as { command?: string } | undefined)?.command;
      if (command === 'add' || command === 'plan' || command === 'answer')
        return [{ prompt: '', command: 'status', label: 'Where do things stand?' }];
      if (command === 'status') return [{ prompt: '', command: 'run', label: 'Run what is ready' }];
      return [];
    },
  };
  return { disposable: participant, recorder };
}
