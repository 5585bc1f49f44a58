import type { AgentCliAdapter, CliAgentKind } from '../types';
import { claudeCodeAdapter } from './claudeCode';

/** One adapter per agent CLI Ralph drives. */
export const AGENT_CLI_ADAPTERS = { 'claude-code': claudeCodeAdapter } as Readonly<Record<CliAgentKind, AgentCliAdapter>>;
