/** The unified delegation protocol (DESIGN §4): what the orchestrator asks, what every sub-agent returns. */

/** The built-in sub-agents; their profiles can be overridden under `agents.<name>` in the config. */
export const AGENT_NAMES = ['scout', 'devo', 'caio'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

/** One `delegate` call (and each entry of `delegate_parallel`). */
export interface DelegationRequest {
  target: AgentName;
  objective: string;
  constraints?: string[];
  expectedOutcome?: string;
  /** Tool names that must have succeeded at least once; each one missing shows as `[MISSING]`. */
  expectedEvidence?: string[];
}

export type DelegationStatus = 'success' | 'partial' | 'failed' | 'escalated';

/** One tool execution of a sub-agent, taken from the real tool log (never from the agent's claims). */
export interface ToolEvidence {
  tool: string;
  success: boolean;
  summary: string;
  /** The action needs a human's approval and has not run (not a failure). */
  pendingApproval?: boolean;
  /** What the action created outside the working tree: a commit sha, a PR URL… */
  externalId?: string;
  nextStep?: string;
}

/** An `expectedEvidence` tool with no successful call. */
export interface MissingEvidence {
  tool: string;
  summary: string;
}

export type ScoutConfidence = 'low' | 'medium' | 'high';

export interface ScoutFindings {
  relevantFiles: string[];
  codePatterns: string[];
  webFindings: string[];
  recommendations: string[];
  confidence: ScoutConfidence;
}

/** What every sub-agent returns; `status` is derived from the evidence with no model call. */
export interface DelegationResult {
  status: DelegationStatus;
  /** The agent's answer (for a scout, its summary followed by its findings). */
  summary: string;
  toolEvidence: ToolEvidence[];
  /** Present when the delegation named `expectedEvidence` and some of it is missing. */
  missingEvidence?: MissingEvidence[];
  /** The reason the sub-agent gave when it called `escalate`. */
  escalation?: string;
  findings?: ScoutFindings;
}
