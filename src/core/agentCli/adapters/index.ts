import type { AgentCliAdapter, CliAgentKind } from '../types';

/** One adapter per agent CLI Ralph drives. */
export const AGENT_CLI_ADAPTERS: Readonly<Record<CliAgentKind, AgentCliAdapter>> = {
};
