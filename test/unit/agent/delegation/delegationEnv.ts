import { Delegator } from '../../../../src/core/agent/delegation/delegator';
import type { ToolContext } from '../../../../src/core/agent/tools/types';
import { parseConfig } from '../../../../src/core/config/load';
import type { RalphConfig, RalphConfigInput } from '../../../../src/core/config/schema';
import type { RalphEvent, RalphEventBody } from '../../../../src/core/events';
import { createModelClient } from '../../../../src/core/llm/factory';
import type { ApprovalPrompt } from '../../../../src/core/ports';
import { startScriptedServer, type ScriptedServer, type Step, type WireRequestBody } from '../../../fixtures/scriptedServer';
import { makeTempWorkspace, type TempWorkspace } from '../../helpers/tempWorkspace';
import { makeToolContext } from '../toolContext';

export const TASK_PROMPT = 'EXACT TASK PROMPT: make login accept + in emails.';

/** A delegator on a real model client against the scripted server, over a temp git workspace. */
export interface DelegationEnv {
  ws: TempWorkspace;
  server: ScriptedServer;
  config: RalphConfig;
  delegator: Delegator;
  /** The orchestrator's tool context (conversation included). */
  ctx: ToolContext;
  events: RalphEventBody[];
  approvals: { title: string; detail: string }[];
  cleanup(): Promise<void>;
}

export async function makeDelegationEnv(
  steps: Step[],
  options: { config?: RalphConfigInput; approve?: boolean; files?: Record<string, string> } = {},
): Promise<DelegationEnv> {
  const ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n', ...options.files } });
  const server = await startScriptedServer({ steps });
  const extra = options.config ?? {};
  const config = parseConfig({
    ...extra,
    llm: { baseUrl: server.url, models: ['model-a', 'model-b'], maxRetries: 0, requestTimeoutMs: 5000, ...extra.llm },
  });
  const events: RalphEventBody[] = [];
  const approvals: { title: string; detail: string }[] = [];
  const approval: ApprovalPrompt | undefined =
    options.approve === undefined
      ? undefined
      : {
          approve: async (request) => {
            approvals.push(request);
            return options.approve === true;
          },
        };
  const delegator = new Delegator({ config, model: createModelClient(config.llm, 'sk-test'), approval });
  const ctx = makeToolContext(ws, {
    conversation: { taskId: 'T-001', iteration: 1, modelName: 'model-a', request: TASK_PROMPT, emit: (body) => events.push(body) },
  });
  return {
    ws,
    server,
    config,
    delegator,
    ctx,
    events,
    approvals,
    async cleanup() {
      await server.close();
      await ws.cleanup();
    },
  };
}

export function systemText(body: WireRequestBody | undefined): string {
  const first = body?.messages?.[0];
  return first?.role === 'system' && typeof first.content === 'string' ? first.content : '';
}

export function ofType<T extends RalphEventBody['type']>(events: RalphEventBody[], type: T): Extract<RalphEventBody, { type: T }>[] {
  return events.filter((e): e is Extract<RalphEventBody, { type: T }> => e.type === type);
}

export type { RalphEvent };
