/**
 * Language-model tools, so that agent mode (any chat model) can hand work to Ralph:
 * `ralph_addTask`, `ralph_status`, `ralph_runTask`. Adding a task and starting a run are
 * confirmed by the person first (VS Code shows the confirmation before `invoke`).
 */
import * as vscode from 'vscode';
import { z } from 'zod';
import { errorMessage } from '../core/errors';
import { NewTaskSchema, TASK_TYPES } from '../core/tasks/schema';
import { pendingDependencies } from '../core/tasks/select';
import { formatZodIssues } from '../core/util/zodIssues';
import { draftMarkdown } from './chatAdd';
import type { ChatServices } from './chatCommands';
import { readyTasks, statusMarkdown } from './statusText';

const AddInput = z.object({
  title: z.string(),
  prompt: z.string(),
  promise: z.string(),
  check: z.string().optional(),
  type: z.enum(TASK_TYPES).optional(),
  dependsOn: z.array(z.string()).optional(),
  priority: z.number().optional(),
});
type AddInput = z.infer<typeof AddInput>;
const RunInput = z.object({ taskId: z.string().optional() });
type RunInput = z.infer<typeof RunInput>;

const text = (value: string) => new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(value)]);

/** A tool's input checked like any other input: a bad one is an error the model reads, never a crash. */
function parse<T>(schema: z.ZodType<T>, input: unknown, tool: string): T {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new Error(`${tool}: invalid input: ${formatZodIssues(parsed.error).join('; ')}`);
  return parsed.data;
}

export function registerRalphTools(s: ChatServices | undefined): vscode.Disposable[] {
  const ready = (): ChatServices => {
    if (!s) throw new Error('Ralph Loop needs an open folder on this machine');
    return s;
  };
  return [
    vscode.lm.registerTool<AddInput>('ralph_addTask', {
      prepareInvocation: ({ input }) => ({
        invocationMessage: `Adding the Ralph task "${input.title}"`,
        confirmationMessages: {
          title: 'Add this task to Ralph?',
          message: new vscode.MarkdownString(
            draftMarkdown({ title: input.title, prompt: input.prompt, promise: input.promise, check: input.check, type: input.type }),
          ),
        },
      }),
      invoke: async ({ input }) => {
        const services = ready();
        const fields = parse(NewTaskSchema, parse(AddInput, input, 'ralph_addTask'), 'ralph_addTask');
        await services.store.ensure();
        const task = await services.store.add(fields);
        void vscode.commands.executeCommand('setContext', 'ralph.initialized', true);
        return text(
          `Added ${task.id} "${task.title}" (to do${task.dependsOn.length ? `, after ${task.dependsOn.join(', ')}` : ''}). It runs when the person starts Ralph, or through ralph_runTask.`,
        );
      },
    }),
    vscode.lm.registerTool<Record<string, never>>('ralph_status', {
      prepareInvocation: () => ({ invocationMessage: 'Reading where Ralph stands' }),
      invoke: async () => {
        const services = ready();
        return text(statusMarkdown(await services.store.list(), services.runs.status));
      },
    }),
    vscode.lm.registerTool<RunInput>('ralph_runTask', {
      prepareInvocation: async ({ input }) => ({
        invocationMessage: input.taskId ? `Starting Ralph on ${input.taskId}` : 'Starting the Ralph autopilot',
        confirmationMessages: {
          title: input.taskId ? `Run Ralph on ${input.taskId}?` : 'Start the Ralph autopilot?',
          message: input.taskId
            ? `Ralph will work on **${input.taskId}** in this workspace: edit files, run commands and commit each iteration.`
            : 'Ralph will run every ready task in this workspace: edit files, run commands and commit each iteration.',
        },
      }),
      invoke: async ({ input }) => startRun(ready(), parse(RunInput, input, 'ralph_runTask').taskId),
    }),
  ];
}

/** Starts the run and answers once it is running (or was refused); the run goes on in the background. */
async function startRun(s: ChatServices, taskId: string | undefined): Promise<vscode.LanguageModelToolResult> {
  if (s.runs.running) throw new Error('Ralph is already running in this window; ralph_status says where it is');
  const tasks = await s.store.list();
  if (taskId) {
    const task = tasks.find((t) => t.id === taskId);
    if (!task) throw new Error(`there is no task ${taskId}; ralph_status lists them`);
    if (!['todo', 'in_progress', 'halted'].includes(task.status))
      throw new Error(`${taskId} is ${task.status}; only a task that is to do, interrupted or halted can run`);
    const pending = pendingDependencies(task, tasks);
    if (pending.length > 0) throw new Error(`${taskId} waits for ${pending.join(', ')} to be done first`);
  } else if (readyTasks(tasks).length === 0) throw new Error('no task is ready to run');
  let listening: vscode.Disposable | undefined;
  const running = new Promise<void>((resolve) => {
    listening = s.runs.onDidChange((live) => live.state !== 'idle' && resolve());
  });
  const run = s.runs.start(taskId);
  run.catch((error) => s.intake.logger.error(`ralph_runTask: ${errorMessage(error)}`));
  try {
    await Promise.race([running, run.then(() => undefined)]);
  } finally {
    listening?.dispose();
  }
  return text(
    `${taskId ? `Ralph is working on ${taskId}` : 'The Ralph autopilot is running'} in the background; the progress panel shows it, and ralph_status says where it is.`,
  );
}
