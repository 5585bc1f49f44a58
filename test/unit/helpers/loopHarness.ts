import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RalphConfigInput } from '../../../src/core/config/schema';
import { parseConfig } from '../../../src/core/config/load';
import { EventBus, type RalphEvent } from '../../../src/core/events';
import { createModelClient } from '../../../src/core/llm/factory';
import { RalphRunner } from '../../../src/core/loop/run/runner';
import { RalphPaths } from '../../../src/core/paths';
import type { ApprovalPrompt, Clock, SafeguardPrompt } from '../../../src/core/ports';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import type { NewTask } from '../../../src/core/tasks/schema';
import { TaskStore } from '../../../src/core/tasks/store';
import { startScriptedServer, type ScriptedServer, type ScriptedServerOptions, type Step } from '../../fixtures/scriptedServer';
import { makeTempWorkspace, type TempWorkspace } from './tempWorkspace';

export const TEST_KEY_ENV = 'RALPH_UNIT_TEST_KEY';
export const TEST_KEY = 'sk-unit-test-secret';

/** A temp git workspace, a scripted model server and a task store, wired like the CLI wires them. */
export interface LoopHarness {
  ws: TempWorkspace;
  server: ScriptedServer;
  paths: RalphPaths;
  store: TaskStore;
  events: RalphEvent[];
  bus: EventBus;
  /** Writes `.ralph/config.json` pointing at the scripted server, merged with `extra`. */
  configure(extra?: RalphConfigInput): Promise<void>;
  addTask(task?: Partial<NewTask>): Promise<string>;
  /** A runner wired like the CLI's; `approval` answers caio's questions (default: refuse). */
  runner(options?: {
    approval?: ApprovalPrompt;
    safeguards?: SafeguardPrompt;
    clock?: Clock;
    fallbackKeys?: Record<string, string>;
    /** Nobody there to ask (`RunnerDeps.unattended`). */
    unattended?: boolean;
  }): RalphRunner;
  cleanup(): Promise<void>;
}

export async function makeLoopHarness(steps: Step[] = [], serverOptions: Omit<ScriptedServerOptions, 'steps'> = {}): Promise<LoopHarness> {
  const ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
  const server = await startScriptedServer({ ...serverOptions, steps });
  const paths = new RalphPaths(ws.dir);
  const store = new TaskStore(paths);
  const events: RalphEvent[] = [];
  const bus = new EventBus();
  bus.subscribe((event) => events.push(event));
  let config: RalphConfigInput = {};
  process.env[TEST_KEY_ENV] = TEST_KEY;

  const harness: LoopHarness = {
    ws,
    server,
    paths,
    store,
    events,
    bus,
    async configure(extra = {}) {
      config = {
        ...extra,
        llm: {
          baseUrl: server.url,
          apiKeyEnv: TEST_KEY_ENV,
          models: ['model-a', 'model-b'],
          maxRetries: 2,
          requestTimeoutMs: 5000,
          ...extra.llm,
        },
        // one task at a time in the workspace unless a test asks for parallel agents in worktrees
        loop: { maxIterations: 5, maxParallel: 1, ...extra.loop },
      };
      await fs.mkdir(paths.dir, { recursive: true });
      await fs.writeFile(paths.config, JSON.stringify(config, null, 2));
    },
    async addTask(task = {}) {
      const added = await store.add({
        title: 'Write hello',
        prompt: 'Create hello.txt containing "hi".',
        promise: 'hello.txt contains hi',
        ...task,
      });
      return added.id;
    },
    runner(options = {}) {
      const parsed = parseConfig(config);
      const runner: RalphRunner = new RalphRunner({
        workspace: ws.dir,
        config: parsed,
        bus,
        commands: new NodeCommandRunner(),
        model: createModelClient(parsed.llm, TEST_KEY, (notice) => runner.reportRetry(notice), {
          keySource: `the environment variable ${TEST_KEY_ENV}`,
          onFallback: (notice) => runner.reportFallback(notice),
          clock: options.clock,
          fallbackKeys: options.fallbackKeys,
        }),
        approval: options.approval,
        safeguards: options.safeguards,
        ...(options.clock ? { clock: options.clock } : {}),
        ...(options.unattended ? { unattended: true } : {}),
      });
      return runner;
    },
    async cleanup() {
      await server.close();
      await ws.cleanup();
    },
  };
  await harness.configure();
  return harness;
}

/** The chat requests the server received, in order (fault answers included). */
export function chatRequests(server: ScriptedServer) {
  return server.requests.filter((r) => r.path.endsWith('/chat/completions'));
}

/** The text of every message of a recorded request, joined. */
export function requestText(request: { body?: { messages?: { content?: unknown }[] } }): string {
  return (request.body?.messages ?? [])
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')))
    .join('\n');
}

export function eventsOf<T extends RalphEvent['type']>(events: RalphEvent[], type: T): Extract<RalphEvent, { type: T }>[] {
  return events.filter((e): e is Extract<RalphEvent, { type: T }> => e.type === type);
}

export async function readJson(file: string): Promise<unknown> {
  return JSON.parse(await fs.readFile(file, 'utf8'));
}

export const rel = (...segments: string[]) => path.join(...segments);
