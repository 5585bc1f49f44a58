import type { RalphConfig } from '../config/schema';
import { errorMessage } from '../errors';
import { existsSync } from 'node:fs';
import type { ScriptRun } from './analysisState';
import { type Analysis, analyseCommand, type Finding } from './commandAnalysis';
import { UNCONFINED_REACH } from './inlineCode';
import type { ChangedFiles } from './taskChanges';
import { bashParser } from './shellParser';

/** `confinable` (asks only): every reason to ask is a write whose path is known only at run time, which the sandbox confines. */
export type CommandDecision = { action: 'allow' | 'deny' | 'ask'; reason: string; confinable?: boolean };

/**
 * Where the command runs: the workspace root, and the directory it starts in (default: the root);
 * `changes`, the files the running task changed: running one of them is asked like inline code.
 */
export interface CommandPlace {
  root: string;
  cwd?: string;
  changes?: ChangedFiles;
}

/** A last line behind the parser: the classic fork bomb, in whatever spacing. */
const FORK_BOMB = /:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/;

/**
 * Decides whether `run_command` may run a command. The line is parsed with a real shell
 * grammar (tree-sitter-bash) and every simple command in it is judged — in pipelines, lists,
 * `$(…)`, backticks, `<(…)`, subshells, functions, here-docs fed to a shell, the text of
 * `bash -c`/`eval` — after quotes and escapes are removed, the command word is reduced to its
 * name (`\rm`, `/bin/rm` → rm), wrappers (`env`, `command`, `exec`, `timeout`, `xargs`, `nice`…)
 * are judged as what they run, git's global options are skipped to its subcommand, and path
 * arguments are resolved against the directory the command runs in. What cannot be judged
 * (a parse error, a command name known only at run time) is asked, never allowed silently.
 *
 * Order: built-in denials, `commands.deny` (refused), `commands.requireApproval` (asked), the
 * built-in gated commands unless `commands.allow` matches them, semi-auto (asks everything).
 * Config patterns are globs (`*` any text) or `/regex/`, matched against the whole line and
 * against each simple command in its normalised form (`\rm -rf x` is tried as `rm -rf x`).
 */
export async function evaluateCommand(
  command: string,
  config: Pick<RalphConfig, 'commands' | 'loop'>,
  place: CommandPlace,
): Promise<CommandDecision> {
  const text = command.trim();
  let parser;
  try {
    parser = await bashParser();
  } catch (error) {
    return { action: 'ask', reason: `the shell parser could not be loaded (${errorMessage(error)}), so no command can be judged` };
  }
  const analysis = analyseCommand(parser, text, { root: place.root, cwd: place.cwd ?? place.root });
  if (FORK_BOMB.test(text)) analysis.findings.unshift({ action: 'deny', reason: 'a fork bomb', command: text });
  if (place.changes) analysis.findings.push(...(await changedScripts(analysis, place.changes)));
  const denial = analysis.findings.find((f) => f.action === 'deny');
  if (denial) return { action: 'deny', reason: `refused by the built-in policy: ${denial.reason}` };
  const forms = [text, ...analysis.commands];
  const configured = (patterns: readonly string[]) => patterns.find((p) => forms.some((form) => matches(p, form)));
  const deny = configured(config.commands.deny);
  if (deny) return { action: 'deny', reason: `refused by commands.deny (${deny})` };
  const ask = configured(config.commands.requireApproval);
  if (ask) return { action: 'ask', reason: `commands.requireApproval (${ask})` };
  const allowedBy = (form: string) => config.commands.allow.find((p) => matches(p, text) || matches(p, form));
  const gated = analysis.findings.filter((f) => !allowedBy(f.command));
  if (gated.length > 0)
    return {
      action: 'ask',
      reason: gated[0].reason,
      ...(config.loop.mode !== 'semi-auto' && gated.every((f) => f.confinable) ? { confinable: true } : {}),
    };
  if (config.loop.mode === 'semi-auto') return { action: 'ask', reason: 'semi-auto mode asks before every command' };
  const allowed = analysis.findings.length > 0 ? allowedBy(analysis.findings[0].command) : configured(config.commands.allow);
  return { action: 'allow', reason: allowed ? `commands.allow (${allowed})` : 'no rule applies' };
}

/**
 * Script files the line runs that the task changed, or that the line itself writes or makes:
 * their code is as unseen as inline code (the agent wrote it), so they are asked about the same way.
 */
async function changedScripts(analysis: Analysis, changes: ChangedFiles): Promise<Finding[]> {
  const known = analysis.scripts.filter((s): s is ScriptRun & { path: string } => s.path !== undefined);
  const changed = await changes.changed(known.map((s) => s.path));
  const found: Finding[] = [];
  for (const script of analysis.scripts) {
    const why =
      script.path === undefined
        ? 'a script in a directory known only when it runs'
        : analysis.written.has(script.path) || analysis.writtenUnknown
          ? `${script.shown}, a file this command line writes`
          : changed.has(script.path) && !(script.ifExists && !existsSync(script.path))
            ? `${script.shown}, a file this task changed`
            : undefined;
    if (why)
      found.push({
        action: 'ask',
        reason: `running ${why}: code the agent wrote is as unseen as inline code; ${UNCONFINED_REACH}`,
        confinable: true,
        command: script.command,
      });
  }
  return found;
}

export function matches(pattern: string, command: string): boolean {
  if (pattern.length > 2 && pattern.startsWith('/') && pattern.endsWith('/')) {
    try {
      return new RegExp(pattern.slice(1, -1)).test(command);
    } catch {
      return false;
    }
  }
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${escaped}$`).test(command) || new RegExp(`^${escaped}(?:\\s|$)`).test(command);
}
