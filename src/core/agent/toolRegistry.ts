import { z } from 'zod';
import { errorMessage, PathEscapeError } from '../errors';
import type { ToolCall, ToolSpec } from '../llm/types';
import { errorResult, oneLine } from './tools/results';
import type { AgentTool, ToolContext, ToolResult } from './tools/types';

/** Raw argument text accepted for one call (a whole-file write_file fits; the wire bound is the same). */
export const MAX_ARGUMENT_CHARS = 4 * 1024 * 1024;

/**
 * The tools offered to one agent. `execute` is the boundary between the model's raw tool
 * calls and the tools: it parses and validates the arguments and turns every failure into a
 * failed result the model can read and correct (DESIGN §4: a bad call never crashes the loop).
 */
export class ToolRegistry {
  private readonly tools = new Map<string, AgentTool>();
  private cachedSpecs: ToolSpec[] | undefined;

  constructor(tools: readonly AgentTool[]) {
    for (const tool of tools) {
      if (this.tools.has(tool.name)) throw new Error(`tool "${tool.name}" is registered twice`);
      this.tools.set(tool.name, tool);
    }
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  /** OpenAI function-tool specs; `parameters` is the JSON schema of the arguments the tool accepts. */
  specs(): ToolSpec[] {
    this.cachedSpecs ??= [...this.tools.values()].map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: parametersSchema(tool),
    }));
    return this.cachedSpecs;
  }

  /** Runs one call; never throws. */
  async execute(call: ToolCall, ctx: ToolContext): Promise<ToolResult> {
    if (ctx.signal.aborted) return errorResult(`${call.name} was not run: the run is stopping.`, 'aborted');
    if (call.malformed) {
      return errorResult(
        `your tool call was malformed and was not run: ${call.malformed}. Send each call with a string "name" from the offered tools and a JSON object string as "arguments".`,
        'malformed tool call',
      );
    }
    if (call.arguments.length > MAX_ARGUMENT_CHARS) {
      return errorResult(
        `the arguments of ${oneLine(call.name, 60)} are ${call.arguments.length} characters, over the limit of ${MAX_ARGUMENT_CHARS}; split the work into smaller calls.`,
        'arguments too large',
      );
    }
    const tool = this.tools.get(call.name);
    if (!tool) {
      return errorResult(
        `unknown tool "${oneLine(call.name, 80)}". Available tools: ${this.names().join(', ')}.`,
        `unknown tool ${oneLine(call.name, 60)}`,
      );
    }

    let raw: unknown;
    try {
      raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch (error) {
      return errorResult(
        `the arguments of ${tool.name} are not valid JSON (${errorMessage(error)}). Resend the call with a single JSON object matching the tool's parameters.`,
        'arguments are not valid JSON',
      );
    }

    const parsed = tool.schema.safeParse(raw);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `- ${issuePath(issue.path)}: ${issue.message}`);
      return errorResult(
        `invalid arguments for ${tool.name}:\n${problems.join('\n')}\nResend the call with these fields fixed.`,
        `invalid arguments (${parsed.error.issues.map((issue) => issuePath(issue.path)).join(', ')})`,
      );
    }

    try {
      return await tool.run(parsed.data, ctx);
    } catch (error) {
      if (ctx.signal.aborted) return errorResult(`${tool.name} was interrupted: the run is stopping.`, 'aborted');
      if (error instanceof PathEscapeError) return errorResult(`refused: ${error.message}`);
      return errorResult(`${tool.name} failed: ${errorMessage(error)}`);
    }
  }
}

/**
 * JSON schemas by the zod schema they are made from: every agent's registry offers the same
 * tools, and making a schema costs a task's start a few milliseconds of the event loop each.
 */
const SCHEMAS = new WeakMap<AgentTool['schema'], Record<string, unknown>>();

function parametersSchema(tool: AgentTool): Record<string, unknown> {
  const known = SCHEMAS.get(tool.schema);
  if (known) return known;
  // io "input": optional-with-default fields stay optional, which is what the model may send.
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.schema, { io: 'input' }) as Record<string, unknown>;
  if (schema.type !== 'object') throw new Error(`tool "${tool.name}" must take an object of named arguments`);
  SCHEMAS.set(tool.schema, schema);
  return schema;
}

function issuePath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(arguments)' : path.map(String).join('.');
}
