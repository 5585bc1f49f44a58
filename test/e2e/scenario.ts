/**
 * The end-to-end scenario's model and workspace: a scripted OpenAI-compatible server whose
 * first iteration delegates to `devo` (who reads a file), writes a file and reports progress;
 * its second iteration waits until the test lets it go, then finishes the task. A quality gate
 * (`node check.js`) fails until `done.txt` exists, so the panel shows gate results both ways.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startScriptedServer, type ScriptedServer } from '../fixtures/scriptedServer';

export const KEY_ENV = 'RALPH_E2E_KEY';

export const TASK = {
  title: 'Say hello',
  prompt: 'Create hello.txt with a greeting, then done.txt once check.js passes.',
  promise: 'node check.js passes',
  /** The task's executable promise: a required gate of this task only (shown on the card and in the tooltip). */
  check: 'test -f hello.txt',
};

/** The safeguard warning the core raises after iteration 1: `iterationWarnRatio` 0.2 of 5 iterations. */
export const WARNING_TEXT = /1 of 5 iterations used \(20%\)/;

export interface Scenario {
  server: ScriptedServer;
  /** Resolves when iteration 2 asked the model (and is held). */
  secondIterationAsked: Promise<void>;
  releaseSecondIteration(): void;
}

export async function startScenario(): Promise<Scenario> {
  let asked!: () => void;
  let release!: () => void;
  const secondIterationAsked = new Promise<void>((resolve) => (asked = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const server = await startScriptedServer({
    // a provider's prompt cache, so the completion card's receipt has cached input to show
    prefixCache: true,
    steps: [
      // iteration 1: the orchestrator delegates; devo reads the README and answers
      {
        toolCalls: [
          {
            name: 'delegate',
            arguments: { target: 'devo', objective: 'Read README.md and summarise the workspace', expectedOutcome: 'a one-line summary' },
          },
        ],
      },
      { content: 'Reading the README first.', toolCalls: [{ name: 'read_file', arguments: { path: 'README.md' } }] },
      { content: 'The workspace is a fixture with a README and a check script.' },
      {
        content: 'Writing the greeting.',
        toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hello from ralph\n' } }],
      },
      { content: 'Wrote hello.txt; check.js still fails until done.txt exists. <ralph>PROGRESS:50</ralph>' },
      // iteration 2: held until the test has looked at the panel mid-run
      async () => {
        asked();
        await released;
        return { content: 'Finishing.', toolCalls: [{ name: 'write_file', arguments: { path: 'done.txt', content: 'done\n' } }] };
      },
      {
        toolCalls: [
          {
            name: 'ralph_complete',
            arguments: { summary: 'hello.txt and done.txt written', promiseEvidence: 'node check.js prints 4 passed, 0 failed' },
          },
        ],
      },
    ],
  });
  return { server, secondIterationAsked, releaseSecondIteration: release };
}

/** Makes the prepared workspace Ralph-ready except for `.ralph/tasks.json` (the test initializes it). */
export function prepareScenarioWorkspace(workspace: string, serverUrl: string): void {
  fs.writeFileSync(
    path.join(workspace, 'check.js'),
    [
      "const ok = require('fs').existsSync('done.txt');",
      "console.log(ok ? '4 passed, 0 failed' : '3 passed, 1 failed');",
      "if (!ok) console.log('failing: greeting is complete');",
      'process.exit(ok ? 0 : 1);',
      '',
    ].join('\n'),
  );
  fs.mkdirSync(path.join(workspace, '.ralph'), { recursive: true });
  const config = {
    llm: {
      baseUrl: serverUrl,
      apiKeyEnv: KEY_ENV,
      models: ['scripted-model'],
      maxRetries: 0,
      requestTimeoutMs: 600_000,
      prices: { 'scripted-model': { input: 2, output: 8, cachedInput: 0.5 } },
    },
    loop: { maxIterations: 5 },
    // a real safeguard warning for the panel to show mid-run: 20% of the iterations used after iteration 1
    safeguards: { iterationWarnRatio: 0.2 },
    gates: [{ name: 'unit', command: 'node check.js', kind: 'tests', required: true }],
  };
  fs.writeFileSync(path.join(workspace, '.ralph', 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: workspace, stdio: 'ignore' });
  git('add', '-A');
  git('commit', '-q', '--no-verify', '-m', 'e2e: check script and config');
}
