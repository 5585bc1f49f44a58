import { runCommandTool } from './commandTool';
import { editFileTool, listFilesTool, readFileTool, writeFileTool } from './fileTools';
import { gitCommitTool } from './gitTool';
import { searchTool } from './searchTool';
import { askForHelpTool, ralphCompleteTool, reportBlockedTool, reportProgressTool } from './signalTools';
import type { AgentTool } from './types';

export { runCommandTool } from './commandTool';
export { editFileTool, listFilesTool, readFileTool, writeFileTool } from './fileTools';
export { gitCommitTool } from './gitTool';
export { searchTool } from './searchTool';
export { askForHelpTool, ralphCompleteTool, reportBlockedTool, reportProgressTool } from './signalTools';

/** Every tool an agent gets regardless of role, in DESIGN §4 order (delegation tools come from agent/). */
export const CORE_TOOLS: readonly AgentTool[] = Object.freeze([
  readFileTool,
  writeFileTool,
  editFileTool,
  listFilesTool,
  searchTool,
  runCommandTool,
  gitCommitTool,
  ralphCompleteTool,
  reportProgressTool,
  reportBlockedTool,
  askForHelpTool,
]);
