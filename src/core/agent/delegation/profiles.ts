import type { RalphConfig } from '../../config/schema';
import { ConfigError } from '../../errors';
import { AGENT_NAMES, type AgentName } from './types';

/** A sub-agent as the delegator runs it: built-in defaults with `agents.<name>` applied. */
export interface AgentProfile {
  name: AgentName;
  /** What the orchestrator is told this agent is for. */
  role: string;
  systemPrompt: string;
  /** Tool names it may call; `escalate` is added on top. */
  tools: string[];
  maxSteps: number;
  model?: string;
  tier?: number;
}

const FILE_READ = ['read_file', 'list_files', 'search'];
/** Tools with effects outside the working tree; each asks for approval before it runs. */
export const CAIO_ACTIONS = ['git_push', 'open_pull_request', 'open_issue', 'notify'] as const;

const SHARED_RULES = `Every tool call you make is recorded and reported to the orchestrator as evidence, exactly as it happened; what you claim without a tool call to show for it counts for nothing.
Paths are relative to the workspace root; you cannot leave the workspace.
When you are done, stop calling tools and answer with a short report: what you did, what you verified and how, what is left.
If the objective cannot be reached, or needs a decision that is not yours, call escalate with the reason instead of guessing.`;

const SCOUT_FORMAT = `End your final answer with your findings as one JSON object in a \`\`\`json block:
{"summary": "what you found, in a few sentences", "relevantFiles": ["path", …], "codePatterns": ["pattern: where and how it is used", …], "webFindings": [], "recommendations": ["what to do", …], "confidence": "low" | "medium" | "high"}
Use "low" confidence when you could not confirm what you report.`;

const BUILT_IN: Record<AgentName, Omit<AgentProfile, 'name' | 'systemPrompt'> & { prompt: string }> = {
  scout: {
    role: 'read-only research: finds the relevant files, patterns and facts, and recommends an approach',
    tools: [...FILE_READ],
    maxSteps: 20,
    prompt: `You are SCOUT, a read-only research sub-agent working for an orchestrator that delegated one objective to you.
Explore the workspace with read_file, list_files and search. Change nothing. Be specific: name files, functions and lines.`,
  },
  devo: {
    role: 'implementation: edits files, runs commands and tests, commits',
    tools: [...FILE_READ, 'write_file', 'edit_file', 'run_command', 'git_commit'],
    maxSteps: 30,
    prompt: `You are DEVO, the implementation sub-agent working for an orchestrator that delegated one objective to you.
Make the change, then prove it: after your last edit, run the build or the tests with run_command, then commit with git_commit (unless the delegation says not to commit). A change that was never run or never committed is reported to the orchestrator as [MISSING]. Keep to the objective and its constraints.`,
  },
  caio: {
    role: "actions outside the working tree: git push, pull requests, issues, notifications (each needs a human's approval)",
    tools: [...FILE_READ, ...CAIO_ACTIONS],
    maxSteps: 12,
    prompt: `You are CAIO, the sub-agent for actions with effects outside the working tree: git_push, open_pull_request, open_issue and notify.
Every such action asks a human for approval before it runs. One that is not approved stays pending: do not retry it, report it. Never try to reach the same effect another way.`,
  },
};

/**
 * The three sub-agents with the config's overrides applied. Tool names are checked against
 * `available` (the tools a sub-agent can be given) so a typo fails the run at its start.
 */
export function resolveProfiles(agents: RalphConfig['agents'], available: readonly string[]): Record<AgentName, AgentProfile> {
  const known = new Set(available);
  const profiles = {} as Record<AgentName, AgentProfile>;
  for (const name of AGENT_NAMES) {
    const base = BUILT_IN[name];
    const override = agents[name] ?? {};
    const tools = override.tools ? [...new Set(override.tools)] : base.tools;
    const unknown = tools.filter((tool) => !known.has(tool));
    if (unknown.length > 0) {
      throw new ConfigError(
        `.ralph/config.json: agents.${name}.tools names ${unknown.map((t) => `"${t}"`).join(', ')}, which no sub-agent can use; choose from ${available.join(', ')}`,
        '.ralph/config.json',
      );
    }
    const rules = name === 'scout' ? `${SHARED_RULES}\n\n${SCOUT_FORMAT}` : SHARED_RULES;
    profiles[name] = {
      name,
      role: base.role,
      // the protocol rules stay even with a custom prompt: evidence, escalate and the scout's JSON depend on them
      systemPrompt: `${override.systemPrompt ?? base.prompt}\n\n${rules}`,
      tools,
      maxSteps: override.maxSteps ?? base.maxSteps,
      model: override.model,
      tier: override.tier,
    };
  }
  return profiles;
}

/** `model` wins over `tier`; a tier past the ladder's top means the top; neither means the orchestrator's model. */
export function profileModel(profile: AgentProfile, ladder: readonly string[], orchestratorModel: string): string {
  if (profile.model) return profile.model;
  if (profile.tier !== undefined && ladder.length > 0) return ladder[Math.min(profile.tier, ladder.length - 1)];
  return orchestratorModel;
}
