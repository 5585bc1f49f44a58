import type { AgentCliAdapter, CliAgentKind } from '../types';
import { claudeCodeAdapter } from './claudeCode';
import { codexAdapter } from './codex';
import { copilotAdapter } from './copilot';
import { geminiAdapter } from './gemini';
import { opencodeAdapter } from './opencode';

/** One adapter per agent CLI Ralph drives. */
export const AGENT_CLI_ADAPTERS: Readonly<Record<CliAgentKind, AgentCliAdapter>> = {
  'claude-code': claudeCodeAdapter,
  codex: codexAdapter,
  opencode: opencodeAdapter,
  copilot: copilotAdapter,
  gemini: geminiAdapter,
};
