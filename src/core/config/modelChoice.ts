/**
 * Writes the model a person chose (Ralph: Select Model) into `.ralph/config.json`: `llm.provider`
 * and `llm.models`, edited in place (the rest of the file, its order and indentation kept),
 * validated before it is written, written atomically. An invalid existing file is refused, not
 * overwritten.
 */
import { applyEdits, modify } from 'jsonc-parser';
import { ConfigError } from '../errors';
import { readTextIfExists, writeFileAtomic } from '../util/atomicWrite';
import { parseConfigText, starterConfig } from './load';
import type { RalphConfig } from './schema';
import type { ConfigService } from './service';

export interface ModelChoice {
  provider: RalphConfig['llm']['provider'];
  /** An `llm.models` entry: an endpoint model id, or an editor model selector ("copilot/gpt-4.1"). */
  model: string;
}

/**
 * The ladder after choosing `choice`: the chosen model first. With the same provider the
 * other entries stay behind it (escalation still climbs them); a provider change starts a new
 * ladder, since the old entries name models the new provider does not have.
 */
export function modelsAfterChoice(current: RalphConfig['llm'], choice: ModelChoice): string[] {
  if (current.provider !== choice.provider) return [choice.model];
  return [choice.model, ...current.models.filter((m) => m !== choice.model)];
}

/** Applies `choice` to the workspace config; returns the config as it now is (the service's listeners told). */
export async function writeModelChoice(service: ConfigService, choice: ModelChoice): Promise<RalphConfig> {
  return editConfig(service, `choosing ${choice.model}`, (current) => [
    [['llm', 'provider'], choice.provider],
    [['llm', 'models'], modelsAfterChoice(current.llm, choice)],
  ]);
}

/**
 * Sets keys of `.ralph/config.json` in place (the rest of the file, its order and indentation
 * kept), validated before it is written, written atomically; `what` names the change in the
 * error when it would make the file invalid. Returns the config as it now is.
 */
export async function editConfig(
  service: ConfigService,
  what: string,
  edits: (current: RalphConfig) => [path: string[], value: unknown][],
): Promise<RalphConfig> {
  const { paths } = service;
  const shown = paths.relative(paths.config);
  const existing = await readTextIfExists(paths.config);
  const text = existing ?? `${JSON.stringify(starterConfig(), null, 2)}\n`;
  const current = parseConfigText(text, shown); // throws on a broken file: nothing is overwritten
  const format = { insertSpaces: true, tabSize: detectIndent(text), eol: text.includes('\r\n') ? '\r\n' : '\n' };
  let next = text;
  for (const [key, value] of edits(current)) next = applyEdits(next, modify(next, key, value, { formattingOptions: format }));
  let config: RalphConfig;
  try {
    config = parseConfigText(next, shown);
  } catch (error) {
    throw new ConfigError(`${shown} was left unchanged: ${what} would make it invalid (${(error as Error).message})`, shown);
  }
  await writeFileAtomic(paths.config, next.endsWith('\n') ? next : `${next}\n`);
  service.wrote(); // a run's guard must not undo it as tampering
  await service.reload();
  return config;
}

function detectIndent(text: string): number {
  const match = /^( +)"/m.exec(text);
  return match ? Math.min(8, match[1].length) : 2;
}
