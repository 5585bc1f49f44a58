/**
 * Runs the mocha integration suite (out/test/integration/index.js) inside a real VS Code
 * extension host, offline: code-server + headless Chromium (see codeServerHost.ts and
 * /work/shared/TESTING.md). Exits with the code the extension host reports (0 = all passed).
 *
 * Env:
 *   RALPH_EXT_DEV_PATH              extension under development (default: repo root)
 *   RALPH_INTEGRATION_TIMEOUT_MS    overall timeout (default 900000 = 15 min)
 *   RALPH_TEST_FIXTURE              fixture folder copied as the workspace (default test/fixtures/workspace)
 *   RALPH_TEST_VERBOSE=1            also stream the workbench's log, the page console and code-server's output
 *   RALPH_KEEP_TEMP=1               keep the temp workspace and code-server dirs
 *   RALPH_AGENT_CLIS_DIR            the pinned agent CLIs (default: the cache scripts/install-agent-clis.sh fills;
 *                                   passed on, since the host's XDG_CACHE_HOME is a temp dir)
 * Every other variable of this process reaches the extension host (and so the tests);
 * RALPH_TEST_WORKSPACE is set to the folder that is open.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENT_CLIS_DIR } from '../unit/helpers/agentClis';
import { CodeServerError, repoRoot, startCodeServer, type CodeServerHost } from './codeServerHost';
import { packLmFixture } from './lmFixture';
import { prepareWorkspace } from './workspace';

const TAG = '[integration]';
/** Prefix test/index.ts puts on every console line of the extension host under test. */
const HOST_LOG_TAG = '<<ralph-ext-host>> ';

function log(msg: string): void {
  process.stdout.write(`${TAG} ${msg}\n`);
}

function formatArgs(args: unknown): string {
  const list = Array.isArray(args) ? args : [args];
  return list.map((a) => (typeof a === 'string' ? a : safeJson(a))).join(' ');
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

export async function runIntegration(): Promise<number> {
  const started = Date.now();
  const timeoutMs = Number(process.env.RALPH_INTEGRATION_TIMEOUT_MS ?? 15 * 60_000);
  const verbose = process.env.RALPH_TEST_VERBOSE === '1';
  const keepTemp = process.env.RALPH_KEEP_TEMP === '1';
  const extDevPath = path.resolve(process.env.RALPH_EXT_DEV_PATH ?? repoRoot);
  const testsPath = path.join(repoRoot, 'out', 'test', 'integration', 'index.js');
  const fixture = path.resolve(process.env.RALPH_TEST_FIXTURE ?? path.join(repoRoot, 'test', 'fixtures', 'workspace'));

  for (const [what, p] of [
    ['extension package.json', path.join(extDevPath, 'package.json')],
    ['compiled test index', testsPath],
  ] as const) {
    if (!fs.existsSync(p)) {
      log(`FAIL missing ${what}: ${p} (run npm run build && npm run compile-tests)`);
      return 1;
    }
  }

  const workspace = prepareWorkspace(fixture);
  log(`workspace ${workspace}`);
  log(`extension ${extDevPath}`);

  const pageConsole: string[] = [];
  const workbenchLog: string[] = [];
  let host: CodeServerHost | undefined;
  let lmFixtureVsix: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let finished = false;
  const cleanup = async (): Promise<void> => {
    finished = true;
    if (timer) clearTimeout(timer);
    await host?.dispose();
    if (lmFixtureVsix) fs.rmSync(path.dirname(lmFixtureVsix), { recursive: true, force: true });
    if (!keepTemp) fs.rmSync(path.dirname(workspace), { recursive: true, force: true });
  };
  let interrupt!: (code: number) => void;
  const interrupted = new Promise<number>((resolve) => (interrupt = resolve));
  let signal: NodeJS.Signals | undefined;
  const onSignal = (sig: NodeJS.Signals): void => {
    signal = sig;
    interrupt(-4);
  };
  // `on`, not `once`: while this listens, codeServerHost's signal hook leaves the exit to us.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  /** Resolves with the extension host's exit code, or a negative code for our own failures. */
  const drive = async (): Promise<number> => {
    // the test-only extension with scripted editor chat models (test/integration/lmProvider.test.ts)
    lmFixtureVsix = packLmFixture();
    const started_ = await startCodeServer({
      installExtensions: [lmFixtureVsix],
      env: { RALPH_TEST_WORKSPACE: workspace, RALPH_HOST_LOG_TAG: HOST_LOG_TAG, RALPH_AGENT_CLIS_DIR: AGENT_CLIS_DIR },
      keepTemp,
      ...(verbose ? { onServerOutput: (line: string) => process.stdout.write(`[code-server] ${line}\n`) } : {}),
    });
    host = started_;
    if (finished) {
      // The overall timeout fired while the server was starting.
      await started_.dispose();
      return -1;
    }
    log(`code-server ${started_.origin} (pid ${started_.pid}) up after ${((Date.now() - started) / 1000).toFixed(1)}s`);

    const context = await started_.newContext();
    let resolveExit!: (code: number) => void;
    const exitCode = new Promise<number>((resolve) => (resolveExit = resolve));

    // Both must exist before the workbench loads: the smoke-test driver looks them up once.
    // codeAutomationLog receives the workbench's whole log (level, message); the extension
    // host's console lines are the tagged ones. One stream keeps their order in CI logs.
    await context.exposeFunction('codeAutomationLog', (type: string, args: unknown) => {
      const text = formatArgs(args);
      if (text.startsWith(HOST_LOG_TAG)) {
        process.stdout.write(`${text.slice(HOST_LOG_TAG.length)}\n`);
      } else {
        workbenchLog.push(`[workbench:${type}] ${text}`);
        if (workbenchLog.length > 300) workbenchLog.shift();
        if (verbose) process.stdout.write(`[workbench:${type}] ${text}\n`);
      }
    });
    await context.exposeFunction('codeAutomationExit', (code: number) => {
      resolveExit(typeof code === 'number' ? code : 1);
    });

    const page = await context.newPage();
    page.on('console', (msg) => {
      const line = `[page:${msg.type()}] ${msg.text()}`;
      pageConsole.push(line);
      if (pageConsole.length > 300) pageConsole.shift();
      if (verbose) process.stdout.write(`${line}\n`);
    });
    page.on('pageerror', (err) => pageConsole.push(`[page:exception] ${err.message}`));
    page.on('crash', () => resolveExit(-2));

    const payload: [string, string][] = [
      ['extensionDevelopmentPath', started_.remoteUri(extDevPath)],
      ['extensionTestsPath', started_.remoteUri(testsPath)],
      ['skipWelcome', 'true'],
      ['skipReleaseNotes', 'true'],
    ];
    const url = started_.workbenchUrl({ folder: workspace, payload });
    if (verbose) log(`open ${url}`);
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 120_000 });
    return Promise.race([exitCode, started_.exited.then(() => -3)]);
  };

  try {
    const timedOut = new Promise<number>((resolve) => {
      timer = setTimeout(() => resolve(-1), timeoutMs);
    });
    const code = await Promise.race([drive(), timedOut, interrupted]);
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    if (code === 0) {
      log(`PASS exit code 0 in ${secs}s`);
      return 0;
    }
    const why =
      code === -1
        ? `timed out after ${timeoutMs} ms (RALPH_INTEGRATION_TIMEOUT_MS)`
        : code === -2
          ? 'the workbench page crashed'
          : code === -3
            ? 'code-server exited during the run'
            : code === -4
              ? `interrupted by ${signal}`
              : `extension host reported exit code ${code}`;
    log(`FAIL ${why} in ${secs}s`);
    if (code === -4) return signal === 'SIGTERM' ? 143 : 130;
    if (host) dumpDiagnostics(host, pageConsole, workbenchLog);
    return code > 0 ? code : 1;
  } catch (err) {
    // CodeServerError messages carry code-server's log tail already.
    log(`FAIL ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    if (host && !(err instanceof CodeServerError)) dumpDiagnostics(host, pageConsole, workbenchLog);
    return 1;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await cleanup();
  }
}

function dumpDiagnostics(host: CodeServerHost, pageConsole: string[], workbenchLog: string[]): void {
  process.stdout.write(`${TAG} --- code-server log tail ---\n${host.logTail(80)}\n${TAG} --- end of code-server log ---\n`);
  process.stdout.write(
    `${TAG} --- workbench log (last 40) ---\n${workbenchLog.slice(-40).join('\n')}\n${TAG} --- end of workbench log ---\n`,
  );
  const errors = pageConsole.filter((l) => /^\[page:(error|warning|exception)\]/.test(l)).slice(-40);
  process.stdout.write(
    `${TAG} --- workbench console (errors/warnings, last 40) ---\n${errors.join('\n')}\n${TAG} --- end of workbench console ---\n`,
  );
}

if (require.main === module) {
  runIntegration().then(
    (code) => process.exit(code),
    (err: unknown) => {
      log(`FAIL ${String(err)}`);
      process.exit(1);
    },
  );
}
