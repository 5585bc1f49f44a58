/**
 * The cacheable share of the prompt on the standard scenario: 3 tasks × 3 iterations, each
 * iteration a tool call (read_file) then a PROGRESS (the last one COMPLETE), against the
 * scripted server simulating a provider's prefix cache. Reports the share of prompt tokens in
 * the stable prefix (tools, system prompt, the task's fixed brief: byte-identical across
 * iterations and tasks) and the cached-token share the server reported back, as the receipts
 * counted it. Tokens at ~4 characters, as the scripted server counts them.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { taskBrief } from '../src/core/agent/context';
import { parseConfig } from '../src/core/config/load';
import { EventBus } from '../src/core/events';
import { createModelClient } from '../src/core/llm/factory';
import { RalphRunner } from '../src/core/loop/run/runner';
import { RalphPaths } from '../src/core/paths';
import { NodeCommandRunner } from '../src/core/commands/processRunner';
import { TaskStore } from '../src/core/tasks/store';
import { promptText, type RecordedRequest, startScriptedServer, type Step } from '../test/fixtures/scriptedServer';

export interface PromptCacheBenchResult {
  scenario: string;
  requests: number;
  promptTokens: number;
  /** Prompt tokens in the stable prefix, over all prompt tokens. */
  stablePrefixShare: number;
  /** Cached prompt tokens the server reported (via the receipts), over all prompt tokens. */
  cachedShare: number;
  /** Requests whose prompt did not start with its stable prefix (should be 0). */
  prefixBroken: number;
}

const TASKS = 3;
const ITERATIONS = 3;

export async function benchPromptCache(): Promise<PromptCacheBenchResult> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-bench-cache-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('config', 'user.name', 'bench');
  git('config', 'user.email', 'bench@localhost');
  await fs.writeFile(path.join(dir, 'README.md'), `# bench\n\n${'Some project documentation. '.repeat(40)}\n`);
  git('add', '-A');
  git('commit', '-qm', 'init');

  const steps: Step[] = [];
  for (let t = 0; t < TASKS; t++) {
    for (let i = 1; i <= ITERATIONS; i++) {
      steps.push({ toolCalls: [{ name: 'read_file', arguments: { path: 'README.md' } }] });
      steps.push(
        i < ITERATIONS
          ? { content: `step ${i} done <ralph>PROGRESS:${i * 30}</ralph>` }
          : { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'read the README' } }] },
      );
    }
  }
  const server = await startScriptedServer({ steps, prefixCache: true });
  const config = parseConfig({
    llm: { baseUrl: server.url, models: ['bench-model'], maxRetries: 0 },
    loop: { maxIterations: ITERATIONS, maxParallel: 1 },
    safeguards: { noCommitWarnIterations: 50 },
  });
  const store = new TaskStore(new RalphPaths(dir));
  for (let t = 1; t <= TASKS; t++) {
    await store.add({
      title: `bench task ${t}`,
      prompt: `Read the README and summarize section ${t} of it in the notes. ${'Keep to the facts in the file. '.repeat(5)}`,
      promise: `the notes summarize section ${t}`,
    });
  }
  const summary = await new RalphRunner({
    workspace: dir,
    config,
    bus: new EventBus(),
    model: createModelClient(config.llm, 'bench-key'),
    commands: new NodeCommandRunner(),
    store,
  }).run();
  const tasks = await store.list();
  const requests = server.requests.filter((r) => r.path.endsWith('/chat/completions'));
  await server.close();
  await fs.rm(dir, { recursive: true, force: true });

  let promptChars = 0;
  let stableChars = 0;
  let prefixBroken = 0;
  for (const request of requests) {
    const prompt = promptText(request.body);
    promptChars += prompt.length;
    const stable = stablePrefix(
      request,
      tasks.map((t) => taskBrief(t)),
    );
    if (stable === undefined) prefixBroken++;
    else stableChars += stable;
  }
  const total = summary.spend?.total;
  return {
    scenario: `${TASKS} tasks × ${ITERATIONS} iterations, a tool call and a reply each`,
    requests: requests.length,
    promptTokens: total?.promptTokens ?? 0,
    stablePrefixShare: promptChars ? stableChars / promptChars : 0,
    cachedShare: total?.promptTokens ? total.cachedPromptTokens / total.promptTokens : 0,
    prefixBroken,
  };
}

/** Characters of the request's prompt in its stable prefix: tools, the system message, the task's brief. */
function stablePrefix(request: RecordedRequest, briefs: string[]): number | undefined {
  const messages = request.body?.messages ?? [];
  const head = JSON.stringify(request.body?.tools ?? []) + JSON.stringify(messages[0]);
  const prompt = promptText(request.body);
  for (const brief of briefs) {
    const user = JSON.stringify({ role: 'user', content: brief }).slice(0, -2);
    if (prompt.startsWith(head + user)) return head.length + user.length;
  }
  return undefined;
}
