import { z } from 'zod';
import { TaskFileSchema } from '../tasks/schema';
import { RalphConfigSchema } from './schema';

/** JSON schemas generated from the zod schemas, contributed to VS Code through `jsonValidation`. */
export function configJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(RalphConfigSchema, { io: 'input', unrepresentable: 'any' }),
    title: 'Ralph Loop configuration (.ralph/config.json)',
  };
}

export function tasksJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(TaskFileSchema, { io: 'input', unrepresentable: 'any' }),
    title: 'Ralph Loop task store (.ralph/tasks.json)',
  };
}
