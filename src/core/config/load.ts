import { ConfigError } from '../errors';
import type { RalphPaths } from '../paths';
import { writeJsonAtomic } from '../util/atomicWrite';
import { parseJsonWithLocation } from '../util/json';
import { formatZodIssues } from '../util/zodIssues';
import { type RalphConfig, type RalphConfigInput, RalphConfigSchema } from './schema';

/** Validates a config object; the error names the file, each bad key and what was expected. */
export function parseConfig(value: unknown, file = '.ralph/config.json'): RalphConfig {
  const result = RalphConfigSchema.safeParse(value);
  if (!result.success) {
    const lines = formatZodIssues(result.error, '', RalphConfigSchema);
    throw new ConfigError(`${file} is invalid:\n  ${lines.join('\n  ')}`, file);
  }
  return result.data;
}

/** The config in `text` (undefined: the file is missing → every default). */
export function parseConfigText(text: string | undefined, shown: string): RalphConfig {
  if (text === undefined) return RalphConfigSchema.parse({});
  const parsed = parseJsonWithLocation(text);
  if (!parsed.ok) throw new ConfigError(`${shown}: ${parsed.message}`, shown);
  return parseConfig(parsed.value, shown);
}

/** The config `ralph init` writes: the keys people change most (VS Code validates it through the contributed schema). */
export function starterConfig(): RalphConfigInput {
  return {
    llm: { apiKeyEnv: 'OPENAI_API_KEY', models: ['gpt-4.1-mini', 'gpt-4.1', 'o3'] },
    loop: { maxIterations: 50, taskTimeoutMinutes: 30 },
    gates: [],
  };
}

export async function writeConfig(paths: RalphPaths, config: RalphConfigInput): Promise<void> {
  await writeJsonAtomic(paths.config, config);
}
