import { existsSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CliAgentKind } from '../../../src/core/agentKinds';

/** The repository (this file compiles to out/test/unit/helpers/); not cliHarness's, so the integration runner can load this file alone. */
const REPO_ROOT = path.resolve(__dirname, '../../../..');

/** A pinned agent CLI of scripts/agent-clis.txt. */
export interface PinnedAgentCli {
  kind: CliAgentKind;
  npmPackage: string;
  version: string;
  /** Its executable in the cache (scripts/install-agent-clis.sh puts it there). */
  bin: string;
  installed: boolean;
}

/** Where scripts/install-agent-clis.sh installs the CLIs. */
export const AGENT_CLIS_DIR =
  process.env.RALPH_AGENT_CLIS_DIR ??
  path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'ralph-loop', 'agent-clis');

/** The pinned CLI of `kind`, installed or not. */
export function pinnedAgentCli(kind: CliAgentKind): PinnedAgentCli {
  const lines = readFileSync(path.join(REPO_ROOT, 'scripts', 'agent-clis.txt'), 'utf8').split('\n');
  const line = lines.map((l) => l.trim().split(/\s+/)).find((f) => f[0] === kind);
  if (!line) throw new Error(`scripts/agent-clis.txt pins no ${kind}`);
  const [, npmPackage, version, binName] = line;
  const bin = path.join(AGENT_CLIS_DIR, `${kind}-${version}`, 'node_modules', '.bin', binName);
  return { kind, npmPackage, version, bin, installed: existsSync(bin) };
}

/**
 * The CLI for a test, or the test skipped with the command that installs it. Under CI (and in
 * `npm test`, which installs them first) a missing CLI fails: the tier must not pass by skipping.
 */
export function agentCliOrSkip(kind: CliAgentKind, context: Mocha.Context): PinnedAgentCli {
  const cli = pinnedAgentCli(kind);
  if (cli.installed) return cli;
  const why = `${cli.npmPackage}@${cli.version} is not installed in ${AGENT_CLIS_DIR}: run scripts/install-agent-clis.sh`;
  if (process.env.CI === 'true' || process.env.RALPH_REQUIRE_AGENT_CLIS === '1') throw new Error(why);
  console.log(`      (skipped: ${why})`);
  context.skip();
  return cli;
}
