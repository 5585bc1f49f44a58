import type { RalphConfig } from '../config/schema';

export type CommandDecision = { action: 'allow' | 'deny' | 'ask'; reason: string };

interface Rule {
  pattern: RegExp;
  reason: string;
}

/** Build folders a recursive delete may target without asking. */
const BUILD_FOLDERS = /^(?:\.\/)?(?:node_modules|dist|build|out|target|coverage|\.next|\.nuxt|\.cache|\.pytest_cache|__pycache__|tmp|\.turbo|\.parcel-cache)(?:\/[^\s;&|]*)?$/;

/** Refused whatever the configuration says: they destroy or escape what the loop can restore. */
const DENIED: Rule[] = [
  { pattern: /\b(?:curl|wget)\b[^|;&]*\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b/, reason: 'piping a download into a shell' },
  { pattern: /\.git\/hooks\b/, reason: 'writing git hooks' },
  { pattern: /(?:^|[;&|]\s*)sudo\b/, reason: 'sudo' },
  { pattern: /\bmkfs(?:\.\w+)?\b|\bdd\b[^;&|]*\bof=\/dev\//, reason: 'writing a device or file system' },
  { pattern: /:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/, reason: 'a fork bomb' },
  { pattern: /\bchmod\s+(?:-[a-zA-Z]*R[a-zA-Z]*\s+)?[0-7]*7{3}\s+\/(?:\s|$)/, reason: 'opening the whole file system' },
];

/** Asked first: they reach beyond the working tree or rewrite shared history. */
const GATED: Rule[] = [
  { pattern: /\bgit\s+push\b[^;&|]*(?:--force\b|--force-with-lease\b|\s-f\b|\s\+\S+)/, reason: 'force-pushing' },
  { pattern: /\bgit\s+push\b/, reason: 'pushing to a remote' },
  { pattern: /\bgit\s+(?:reset\s+--hard|clean\s+-[a-zA-Z]*f)/, reason: 'discarding work in the repository' },
  { pattern: /\bnpm\s+publish\b|\bcargo\s+publish\b|\btwine\s+upload\b/, reason: 'publishing a package' },
];

/**
 * Decides whether `run_command` may run a command: the built-in denials first, then
 * `commands.deny` (refused), `commands.requireApproval` (asked), dangerous defaults (asked),
 * `commands.allow`. In semi-auto mode every command that is not denied is asked.
 * Patterns in the config are globs (`*` any text) matched against the whole command, or
 * regular expressions written `/…/`.
 */
export function evaluateCommand(command: string, config: Pick<RalphConfig, 'commands' | 'loop'>): CommandDecision {
  const text = command.trim();
  const denial = recursiveDeleteOutsideBuild(text) ?? DENIED.find((r) => r.pattern.test(text))?.reason;
  if (denial) return { action: 'deny', reason: `refused by the built-in policy: ${denial}` };
  const deny = config.commands.deny.find((p) => matches(p, text));
  if (deny) return { action: 'deny', reason: `refused by commands.deny (${deny})` };
  const ask = config.commands.requireApproval.find((p) => matches(p, text));
  if (ask) return { action: 'ask', reason: `commands.requireApproval (${ask})` };
  const gated = GATED.find((r) => r.pattern.test(text));
  const allowed = config.commands.allow.find((p) => matches(p, text));
  if (gated && !allowed) return { action: 'ask', reason: gated.reason };
  if (config.loop.mode === 'semi-auto') return { action: 'ask', reason: 'semi-auto mode asks before every command' };
  return { action: 'allow', reason: allowed ? `commands.allow (${allowed})` : 'no rule applies' };
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

/** `rm -rf X` where X is not a build folder inside the workspace. */
function recursiveDeleteOutsideBuild(command: string): string | undefined {
  for (const segment of command.split(/&&|\|\||;|\|/)) {
    const words = segment.trim().split(/\s+/);
    if (words[0] !== 'rm') continue;
    const flags = words.filter((w) => w.startsWith('-')).join('');
    if (!/r/i.test(flags)) continue;
    const targets = words.slice(1).filter((w) => !w.startsWith('-'));
    const bad = targets.find((t) => !BUILD_FOLDERS.test(t));
    if (targets.length === 0 || bad !== undefined) return `recursive delete of ${bad ?? '(nothing named)'} (only build folders such as dist/ or node_modules/ may be removed)`;
  }
  return undefined;
}
