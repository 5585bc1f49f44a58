import { z } from 'zod';
import type { RalphConfig } from '../../config/schema';
import type { ApprovalPrompt } from '../../ports';
import { errorResult, oneLine } from '../tools/results';
import { type AgentTool, defineTool, type ToolContext, type ToolResult } from '../tools/types';

type CaioCommands = NonNullable<NonNullable<RalphConfig['agents']['caio']>['commands']>;

export const DEFAULT_PUSH_COMMAND = 'git push "$RALPH_REMOTE" "$RALPH_REF"';

interface Action {
  tool: string;
  /** What a human is asked to approve, e.g. `push HEAD to origin`. */
  what: string;
  command: string | undefined;
  configKey: keyof CaioCommands;
  /** Arguments reach the command as environment variables, never spliced into its text. */
  env: Record<string, string>;
  /** Runs after a successful command, for actions whose id is not in their output. */
  fallbackId?: (ctx: ToolContext) => Promise<string | undefined>;
}

/**
 * The caio actions: effects outside the working tree. Each one asks the ApprovalPrompt first
 * and runs its command only once a human approved; until then its evidence is `pendingApproval`.
 * Once done, the evidence carries an `externalId` (the first URL in the output, or the pushed sha).
 */
export function createCaioTools(commands: CaioCommands, approval: ApprovalPrompt): AgentTool[] {
  const run: RunAction = (action, ctx) => runAction(action, ctx, approval);
  return [pushTool(commands, run), pullRequestTool(commands, run), issueTool(commands, run), notifyTool(commands, run)];
}

type RunAction = (action: Action, ctx: ToolContext) => Promise<ToolResult>;

function pushTool(commands: CaioCommands, run: RunAction): AgentTool {
  return defineTool({
    name: 'git_push',
    description: "Push commits to a remote (needs a human's approval; stays pending until approved).",
    schema: z.object({
      remote: z.string().min(1).optional().describe('Remote name. Default: origin.'),
      ref: z.string().min(1).optional().describe('What to push, e.g. a branch name. Default: HEAD (the current branch).'),
    }),
    async run(args, ctx) {
      const remote = args.remote ?? 'origin';
      const ref = args.ref ?? 'HEAD';
      const command = commands.push ?? DEFAULT_PUSH_COMMAND;
      return run(
        {
          tool: 'git_push',
          what: `push ${ref} to ${remote}`,
          command,
          configKey: 'push',
          env: { RALPH_REMOTE: remote, RALPH_REF: ref },
          fallbackId: headSha,
        },
        ctx,
      );
    },
  });
}

function pullRequestTool(commands: CaioCommands, run: RunAction): AgentTool {
  return defineTool({
    name: 'open_pull_request',
    description: "Open a pull request through the configured command (needs a human's approval; stays pending until approved).",
    schema: z.object({
      title: z.string().trim().min(1),
      body: z.string().default(''),
      base: z.string().optional().describe('Target branch.'),
      head: z.string().optional().describe('Source branch. Default: the current one.'),
    }),
    async run(args, ctx) {
      const env = { RALPH_TITLE: args.title, RALPH_BODY: args.body, RALPH_BASE: args.base ?? '', RALPH_HEAD: args.head ?? '' };
      return run(
        {
          tool: 'open_pull_request',
          what: `open the pull request "${oneLine(args.title, 80)}"`,
          command: commands.pullRequest,
          configKey: 'pullRequest',
          env,
        },
        ctx,
      );
    },
  });
}

function issueTool(commands: CaioCommands, run: RunAction): AgentTool {
  return defineTool({
    name: 'open_issue',
    description: "Open an issue through the configured command (needs a human's approval; stays pending until approved).",
    schema: z.object({ title: z.string().trim().min(1), body: z.string().default('') }),
    async run(args, ctx) {
      const env = { RALPH_TITLE: args.title, RALPH_BODY: args.body };
      return run(
        { tool: 'open_issue', what: `open the issue "${oneLine(args.title, 80)}"`, command: commands.issue, configKey: 'issue', env },
        ctx,
      );
    },
  });
}

function notifyTool(commands: CaioCommands, run: RunAction): AgentTool {
  return defineTool({
    name: 'notify',
    description: "Send a notification through the configured command (needs a human's approval; stays pending until approved).",
    schema: z.object({ message: z.string().trim().min(1) }),
    async run(args, ctx) {
      const env = { RALPH_MESSAGE: args.message };
      return run(
        {
          tool: 'notify',
          what: `send the notification "${oneLine(args.message, 80)}"`,
          command: commands.notify,
          configKey: 'notify',
          env,
        },
        ctx,
      );
    },
  });
}

async function runAction(action: Action, ctx: ToolContext, approval: ApprovalPrompt): Promise<ToolResult> {
  if (!action.command) {
    return {
      ...errorResult(
        `${action.tool} has no command: set "agents.caio.commands.${action.configKey}" in .ralph/config.json. Report this to the orchestrator; do not try another way.`,
        `no command configured (agents.caio.commands.${action.configKey})`,
      ),
      nextStep: `configure agents.caio.commands.${action.configKey}`,
    };
  }
  const detail = [
    `Command: ${action.command}`,
    ...Object.entries(action.env).map(([key, value]) => `${key}=${value.length > 2000 ? `${value.slice(0, 2000)}…` : value}`),
    `Directory: ${ctx.scope.root}`,
  ].join('\n');
  let approved = false;
  if (!ctx.signal.aborted) {
    try {
      approved = await approval.approve({ kind: 'action', title: `Ralph (caio) wants to ${action.what}`, detail });
    } catch {
      approved = false; // a prompt that fails is a prompt nobody answered
    }
  }
  if (!approved) {
    return {
      ok: false,
      pendingApproval: true,
      content: `Not run: "${action.what}" needs a human's approval and was not approved. It stays pending: report it to the orchestrator, do not retry it.`,
      summary: `awaiting approval: ${action.what}`,
      nextStep: `a human must approve: ${action.what}`,
    };
  }

  const result = await ctx.commands.run({
    command: action.command,
    cwd: ctx.scope.root,
    timeoutMs: ctx.commandTimeoutMs,
    maxOutputChars: ctx.maxOutputChars,
    signal: ctx.signal,
    env: action.env,
    purpose: 'action',
  });
  const output = result.output.trim() || '(no output)';
  if (result.exitCode !== 0 || result.timedOut || result.aborted) {
    const status = result.timedOut
      ? 'timed out'
      : result.aborted
        ? 'aborted'
        : result.exitCode !== null
          ? `exit code ${result.exitCode}`
          : `killed by ${result.signal}`;
    return errorResult(`${action.tool} failed (${status}):\n${output}`, `${action.what} failed (${status})`);
  }
  let externalId = /https?:\/\/[^\s"'<>)]+/.exec(result.output)?.[0];
  if (!externalId && action.fallbackId) externalId = await action.fallbackId(ctx).catch(() => undefined);
  return {
    ok: true,
    content: `done: ${action.what}${externalId ? ` (${externalId})` : ''}\n${output}`,
    summary: `${action.what}: done`,
    ...(externalId ? { externalId } : {}),
  };
}

async function headSha(ctx: ToolContext): Promise<string | undefined> {
  try {
    const result = await ctx.commands.run({
      command: 'git rev-parse HEAD',
      cwd: ctx.scope.root,
      timeoutMs: 10_000,
      maxOutputChars: 200,
      signal: ctx.signal,
    });
    const sha = result.output.trim();
    return result.exitCode === 0 && /^[0-9a-f]{7,64}$/.test(sha) ? sha.slice(0, 12) : undefined;
  } catch {
    return undefined;
  }
}
