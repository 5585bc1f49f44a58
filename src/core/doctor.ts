import type { CliAgentKind } from './agentKinds';
import { adapterOf, ownSettings, resolveAgentCommand } from './agentCli/port';
import { cliSandboxDecision, cliSandboxLine } from './agentCli/cliSandbox';
import { agentsOnLadder, ladderOfConfig } from './escalation/steps';
import { execFile } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RalphConfig } from './config/schema';
import { loadConfig } from './config/service';
import { sandboxAdvice } from './commands/sandboxAdvice';
import { probeSandbox, type SandboxProbe } from './commands/sandbox';
import { errorMessage } from './errors';
import { RalphPaths } from './paths';

/** One line of `ralph doctor`: what was looked at, whether it is there, and the fix when it is not. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  /** Missing and needed: a run cannot work (exit 1); missing and not needed: a warning. */
  needed: boolean;
  detail: string;
  fix?: string;
}

export interface DoctorOptions {
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  probe?: () => Promise<SandboxProbe>;
}

/**
 * What a run in `workspace` needs and whether this machine has it: git and a repository, a valid
 * configuration, the sandbox, a key for each model endpoint, the programs the gates call.
 */
export async function doctor(workspace: string, options: DoctorOptions = {}): Promise<DoctorCheck[]> {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const checks: DoctorCheck[] = [];
  const git = await findOnPath('git', env, platform);
  checks.push(
    git
      ? { name: 'git', ok: true, needed: true, detail: (await output(git, ['--version'])) ?? git }
      : { name: 'git', ok: false, needed: true, detail: 'git is not on PATH', fix: 'install git (https://git-scm.com/downloads)' },
  );
  if (git) checks.push(await repositoryCheck(git, workspace));
  let config: RalphConfig | undefined;
  try {
    config = await loadConfig(new RalphPaths(workspace));
    checks.push({ name: 'configuration', ok: true, needed: true, detail: '.ralph/config.json is valid' });
  } catch (error) {
    checks.push({ name: 'configuration', ok: false, needed: true, detail: errorMessage(error), fix: 'correct .ralph/config.json' });
  }
  checks.push(await sandboxCheck(config?.commands.sandbox ?? 'auto', options.probe ?? (() => probeSandbox()), platform));
  if (config) {
    const cli = config.agent.kind !== 'builtin' ? config.agent.kind : undefined;
    // agent.kind's CLI, and those the escalation ladder's steps name
    const { steps, llmModels } = ladderOfConfig(config);
    const kinds = new Set([...(cli ? [cli] : []), ...agentsOnLadder(steps, { config: config.agent }, llmModels)]);
    const probe = options.probe ?? (() => probeSandbox());
    for (const kind of kinds) if (kind !== 'builtin') checks.push(await agentCheck(kind, config, env, await probe(), platform));
    // on an agent CLI, the built-in agent's model is needed only by what calls it (a bug council)
    checks.push(...endpointChecks(config, env).map((c) => (cli ? { ...c, needed: false } : c)));
    checks.push(...(await gateChecks(config, workspace, env, platform)));
  }
  return checks;
}

async function repositoryCheck(git: string, workspace: string): Promise<DoctorCheck> {
  const top = await output(git, ['-C', workspace, 'rev-parse', '--show-toplevel']);
  return top
    ? { name: 'repository', ok: true, needed: true, detail: `a git repository (${top})` }
    : { name: 'repository', ok: false, needed: true, detail: `${workspace} is not a git repository`, fix: 'run ralph init (or git init)' };
}

async function sandboxCheck(
  mode: 'auto' | 'required' | 'off',
  probe: () => Promise<SandboxProbe>,
  platform: NodeJS.Platform,
): Promise<DoctorCheck> {
  const found = await probe();
  const name = 'sandbox';
  if (mode === 'off')
    return { name, ok: true, needed: false, detail: 'commands.sandbox is "off": commands run unconfined, by your choice' };
  if (found.available)
    return { name, ok: true, needed: mode === 'required', detail: `${found.reason} confines the agent's commands and the gates` };
  const advice = sandboxAdvice(found, platform);
  return {
    name,
    ok: false,
    // "required" refuses every command without it; "auto" runs them unconfined, with a warning
    needed: mode === 'required',
    detail: `${found.reason}${mode === 'auto' ? '; commands.sandbox "auto" runs commands unconfined' : '; commands.sandbox "required" refuses every command'}`,
    fix: `${advice.fix}${mode === 'auto' ? ' (or set commands.sandbox to "off" to accept the risk and silence this)' : ''}`,
  };
}

/** The primary endpoint and each fallback: a key where one is needed (OpenAI itself), the editor's models out of the CLI's reach. */
/** An agent CLI of the config (`agent.kind`'s, a ladder step's): found (where), or how to install it. */
async function agentCheck(
  kind: CliAgentKind,
  config: RalphConfig,
  env: NodeJS.ProcessEnv,
  probe: SandboxProbe,
  platform: NodeJS.Platform,
): Promise<DoctorCheck> {
  const adapter = adapterOf(kind);
  try {
    const found = resolveAgentCommand(kind, ownSettings(kind, config.agent), env);
    let confined: string;
    try {
      confined = cliSandboxLine(adapter, cliSandboxDecision(adapter, config.commands.sandbox, probe, platform));
    } catch (error) {
      return { name: `agent ${adapter.label}`, ok: false, needed: true, detail: `${found}; ${errorMessage(error)}` };
    }
    return { name: `agent ${adapter.label}`, ok: true, needed: true, detail: `${found}; ${confined}` };
  } catch (error) {
    return { name: `agent ${adapter.label}`, ok: false, needed: true, detail: errorMessage(error), fix: adapter.install };
  }
}

function endpointChecks(config: RalphConfig, env: NodeJS.ProcessEnv): DoctorCheck[] {
  const { llm } = config;
  if (llm.provider === 'vscode')
    return [
      {
        name: 'model',
        ok: false,
        needed: true,
        detail: 'llm.provider is "vscode": the editor\'s models are only reachable inside VS Code',
        fix: 'run from the Ralph Loop extension, or set llm.provider "openai" with llm.baseUrl and llm.apiKeyEnv',
      },
    ];
  const endpoint = (baseUrl: string | undefined, keyEnv: string, what: string): DoctorCheck => {
    const where = baseUrl ?? 'https://api.openai.com/v1';
    if (env[keyEnv]) return { name: what, ok: true, needed: true, detail: `${where}, key in ${keyEnv}` };
    if (baseUrl) return { name: what, ok: true, needed: true, detail: `${where}, no key (${keyEnv} not set; a local server needs none)` };
    return { name: what, ok: false, needed: true, detail: `${where}: ${keyEnv} is not set`, fix: `export ${keyEnv}=<your API key>` };
  };
  return [
    endpoint(llm.baseUrl, llm.apiKeyEnv, `model endpoint (${llm.models.join(', ')})`),
    ...llm.fallback.map((f) => endpoint(f.baseUrl ?? llm.baseUrl, f.apiKeyEnv ?? llm.apiKeyEnv, `fallback ${f.model}`)),
  ];
}

/** The programs each gate's command calls first in each of its parts (`npm`, `npx`, `pytest`…), and its npm script. */
async function gateChecks(
  config: RalphConfig,
  workspace: string,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform,
): Promise<DoctorCheck[]> {
  const scripts = await packageScripts(workspace);
  const checks: DoctorCheck[] = [];
  for (const gate of config.gates) {
    const missing: string[] = [];
    for (const part of gate.command.split(/&&|\|\||[;|\n]/)) {
      const words = part
        .trim()
        .split(/\s+/)
        .filter((w) => w && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
      const [program, sub, script] = words[0] === 'env' ? words.slice(1) : words;
      if (!program || /^[({!]/.test(program)) continue;
      const found = program.includes('/') ? await executable(path.resolve(workspace, program)) : await findOnPath(program, env, platform);
      if (!found && !SHELL_BUILTINS.has(program)) missing.push(`${program} (not found)`);
      const named = sub === 'run' || sub === 'run-script' ? script : sub === 'test' ? 'test' : undefined;
      if (['npm', 'yarn', 'pnpm'].includes(program) && named && scripts && !scripts.has(named))
        missing.push(`the script "${named}" (not in package.json)`);
    }
    checks.push(
      missing.length === 0
        ? { name: `gate ${gate.name}`, ok: true, needed: gate.required, detail: gate.command }
        : {
            name: `gate ${gate.name}`,
            ok: false,
            needed: gate.required,
            detail: `${gate.command}: ${missing.join(', ')}`,
            fix: 'install what it calls, or correct its command in .ralph/config.json',
          },
    );
  }
  return checks;
}

const SHELL_BUILTINS = new Set([
  'cd',
  'echo',
  'test',
  '[',
  'true',
  'false',
  'exit',
  'export',
  'set',
  'source',
  '.',
  'printf',
  'exec',
  'command',
]);

async function packageScripts(workspace: string): Promise<Set<string> | undefined> {
  try {
    const pkg = JSON.parse(await fs.readFile(path.join(workspace, 'package.json'), 'utf8')) as { scripts?: Record<string, unknown> };
    return new Set(Object.keys(pkg.scripts ?? {}));
  } catch {
    return undefined;
  }
}

/** The program `name` as the shell would find it on PATH, or undefined. */
export async function findOnPath(
  name: string,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): Promise<string | undefined> {
  const dirs = (env.PATH ?? env.Path ?? '').split(platform === 'win32' ? ';' : ':').filter(Boolean);
  const suffixes = platform === 'win32' ? ['', '.exe', '.cmd', '.bat'] : [''];
  for (const dir of dirs)
    for (const suffix of suffixes) if (await executable(path.join(dir, name + suffix))) return path.join(dir, name + suffix);
  return undefined;
}

async function executable(file: string): Promise<string | undefined> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) return undefined;
    await fs.access(file, constants.X_OK);
    return file;
  } catch {
    return undefined;
  }
}

function output(file: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 10_000 }, (error, stdout) => resolve(error ? undefined : stdout.trim() || undefined));
  });
}
