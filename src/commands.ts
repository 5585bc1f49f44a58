/** Every command the extension contributes; package.json and the registrations are checked against this list. */
export const COMMAND_IDS = [
  'ralph.initWorkspace',
  'ralph.addTask',
  'ralph.startAutopilot',
  'ralph.runSelectedTask',
  'ralph.pause',
  'ralph.resume',
  'ralph.stop',
  'ralph.retryTask',
  'ralph.editTask',
  'ralph.increaseMaxIterations',
  'ralph.unblockTask',
  'ralph.cancelTask',
  'ralph.deleteTask',
  'ralph.rollbackTask',
  'ralph.openPanel',
  'ralph.setApiKey',
  'ralph.showLog',
  'ralph.refreshTasks',
  'ralph.openConfig',
  'ralph.runGates',
  'ralph.showReport',
  'ralph.selectModel',
  'ralph.cleanUpWorktree',
  'ralph.planFromDocument',
  'ralph.importGithubIssues',
] as const;

export type CommandId = (typeof COMMAND_IDS)[number];

export type CommandHandler = (...args: unknown[]) => unknown;
