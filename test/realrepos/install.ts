/**
 * Each case's dev dependencies, installed once from the npm registry with the case's own `install`
 * command and cached outside the repository, keyed by a hash of its package.json, its install
 * command and Node's major version:
 * `${RALPH_REALREPOS_CACHE:-~/.cache/ralph-loop/realrepos}/<case>-<hash>/node_modules`.
 * Every scenario of the case gets a copy of that folder (hard links) in its workspace.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cleanEnv, extractBase, type RealCase, run } from './cases';

const INSTALL_TIMEOUT_MS = 10 * 60_000;
const PING_TIMEOUT_MS = 30_000;
const MARKER = '.ralph-realrepos-installed.json';

export function cacheRoot(): string {
  return process.env.RALPH_REALREPOS_CACHE || path.join(os.homedir(), '.cache', 'ralph-loop', 'realrepos');
}

/** The cache folder of a case: `<case>-<hash of package.json, install command, Node major>`. */
export function cacheDirOf(c: RealCase): string {
  const pkg = run('tar', ['-xzOf', path.join(c.dir, 'base.tar.gz'), 'package.json'], c.dir);
  const node = process.versions.node.split('.')[0];
  const hash = createHash('sha256').update(`${pkg}\0${c.install}\0node${node}`).digest('hex').slice(0, 12);
  return path.join(cacheRoot(), `${c.id}-${hash}`);
}

export interface Installed {
  /** The cached `node_modules` to copy into each workspace. */
  nodeModules: string;
  /** Installed by this run (false: found in the cache). */
  fresh: boolean;
  seconds: number;
}

const isCached = (dir: string) => existsSync(path.join(dir, MARKER)) && existsSync(path.join(dir, 'node_modules'));

/** Installs every case at once (bounded), then resolves with each case's cached node_modules. */
export async function installAll(cases: RealCase[], log: (line: string) => void, jobs = 4): Promise<Map<string, Installed>> {
  const done = new Map<string, Installed>();
  // one clear error, before any install starts, where a case must be installed and the registry is out of reach
  if (cases.some((c) => !isCached(cacheDirOf(c)))) await checkRegistry();
  const queue = [...cases];
  const errors: string[] = [];
  const worker = async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      try {
        const installed = await ensureInstalled(c);
        done.set(c.id, installed);
        log(
          `${c.id}: ${installed.fresh ? `installed in ${installed.seconds.toFixed(0)} s` : 'dependencies cached'} (${installed.nodeModules})`,
        );
      } catch (error) {
        errors.push(`${c.id}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, cases.length) }, worker));
  if (errors.length) throw new Error(`the real-repository cases could not be installed:\n${errors.join('\n')}`);
  return done;
}

async function ensureInstalled(c: RealCase): Promise<Installed> {
  const target = cacheDirOf(c);
  const nodeModules = path.join(target, 'node_modules');
  if (isCached(target)) return { nodeModules, fresh: false, seconds: 0 };
  const started = Date.now();
  await fs.mkdir(cacheRoot(), { recursive: true });
  const partial = `${target}.partial-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const logFile = `${target}.install.log`;
  try {
    await extractBase(c, partial);
    await runInstall(c, partial, logFile);
    if (!existsSync(path.join(partial, 'node_modules'))) throw new Error(`"${c.install}" made no node_modules (log: ${logFile})`);
    await fs.writeFile(
      path.join(partial, MARKER),
      JSON.stringify({ install: c.install, node: process.version, at: new Date().toISOString() }),
    );
    await fs.rm(target, { recursive: true, force: true });
    await fs.rename(partial, target);
  } finally {
    await fs.rm(partial, { recursive: true, force: true });
  }
  return { nodeModules, fresh: true, seconds: (Date.now() - started) / 1000 };
}

/** Fails fast, with the registry named, where it cannot be reached (instead of npm's minutes of retries). */
async function checkRegistry(): Promise<void> {
  const registry = run('npm', ['config', 'get', 'registry'], os.tmpdir()).trim();
  const result = await spawnWithTimeout(
    'npm',
    ['ping', '--fetch-retries=0', `--fetch-timeout=${PING_TIMEOUT_MS}`],
    os.tmpdir(),
    PING_TIMEOUT_MS,
  );
  if (result.code !== 0)
    throw new Error(
      `the npm registry ${registry} cannot be reached (npm ping ${result.timedOut ? `gave no answer in ${PING_TIMEOUT_MS / 1000} s` : `exited ${result.code}`}: ` +
        `${npmReason(result.output)}). The real-repository tier installs each case's dev dependencies ` +
        `from it once and keeps them in ${cacheRoot()} (RALPH_REALREPOS_CACHE); restore the network or fill that cache.`,
    );
}

/** npm's own words for a failure: its `npm error` lines without the stack, the object dump and the advice. */
function npmReason(output: string): string {
  const lines = output
    .split('\n')
    .filter((l) => l.startsWith('npm error '))
    .map((l) => l.slice('npm error '.length).trim())
    .filter((l) => l && !/^(at |\{|\}|[a-z]\w*: |If you are behind|A complete log)/.test(l));
  const reason =
    lines.find((l) => l.startsWith('FetchError')) ?? lines.find((l) => /ETIMEDOUT|ENOTFOUND|ECONNREFUSED|EAI_AGAIN|^\d{3} /.test(l));
  return reason ?? (lines.join(' / ') || output.trim().slice(-300));
}

async function runInstall(c: RealCase, cwd: string, logFile: string): Promise<void> {
  const env = cleanEnv({ npm_config_fetch_retries: '2', npm_config_update_notifier: 'false' });
  const result = await spawnWithTimeout('sh', ['-c', c.install], cwd, INSTALL_TIMEOUT_MS, env, logFile);
  if (result.code === 0) return;
  const tail = result.output.trim().split('\n').slice(-8).join('\n');
  const why = result.timedOut ? `did not finish in ${INSTALL_TIMEOUT_MS / 60_000} min` : `exited ${result.code}`;
  throw new Error(`"${c.install}" ${why} (log: ${logFile}):\n${tail}`);
}

export interface Spawned {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Both streams as they came (the last 64 KiB). */
  output: string;
  timedOut: boolean;
}

/** The process groups this harness started and that still run: killed if the tier's process exits first (Ctrl-C). */
const live = new Set<number>();
process.on('exit', () => live.forEach(killGroup));

/** A child process with a hard deadline: its whole process group is killed when it passes. */
export function spawnWithTimeout(
  cmd: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
  env: NodeJS.ProcessEnv = cleanEnv(),
  logFile?: string,
): Promise<Spawned> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    if (child.pid) live.add(child.pid);
    const log = logFile ? createWriteStream(logFile) : undefined;
    const seen = { stdout: '', stderr: '', output: '' };
    let timedOut = false;
    const take = (stream: 'stdout' | 'stderr') => (d: Buffer) => {
      seen[stream] += d.toString();
      seen.output = (seen.output + d.toString()).slice(-64 * 1024);
      log?.write(d);
    };
    child.stdout.on('data', take('stdout'));
    child.stderr.on('data', take('stderr'));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (child.pid) live.delete(child.pid);
      log?.end();
      resolve({ code, ...seen, timedOut });
    });
    child.on('error', (error) => take('stderr')(Buffer.from(String(error))));
  });
}

/** Kills the process group this harness started (never anything else). */
export function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
