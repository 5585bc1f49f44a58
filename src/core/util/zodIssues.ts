import type { z } from 'zod';

/** One line per issue: `llm.models: expected array, received string`. */
export function formatZodIssues(error: z.ZodError, prefix = ''): string[] {
  return error.issues.map((issue) => {
    const key = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
    return `${key || '(root)'}: ${issue.message}`;
  });
}
