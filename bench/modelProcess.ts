/**
 * The parallel bench's model, in a process of its own: the scripted server answering every call
 * after a fixed latency. In the bench's own process its timers and its HTTP work would share one
 * event loop with the agents it answers, so a burst of the agents' own work (four commits at
 * once) would make the *model* late too, and the run with four agents would be charged model
 * time a real provider, on another machine, never adds. Run as `fork(modelProcess.js, [latencyMs])`:
 * it sends `{ url }` once listening and ends when its parent disconnects.
 */
import { fork } from 'node:child_process';
import { type Step, startScriptedServer } from '../test/fixtures/scriptedServer';

/**
 * Writes the file its task names (`WRITE <file>`), runs the task's tests when it names them
 * (`RUN <command>`, the way agents check their work), then completes; every answer after `latencyMs`.
 */
export function agent(latencyMs: number): Step {
  return async (request) => {
    await new Promise((resolve) => setTimeout(resolve, latencyMs));
    const messages = request.body?.messages ?? [];
    const user = messages.find((m) => m.role === 'user');
    const prompt = typeof user?.content === 'string' ? user.content : '';
    const file = /WRITE (\S+)/.exec(prompt)?.[1] ?? 'x.txt';
    const command = /RUN (.+)$/m.exec(prompt)?.[1]?.trim();
    const answered = messages.filter((m) => m.role === 'tool').length;
    if (answered === 0) return { toolCalls: [{ name: 'write_file', arguments: { path: file, content: `${file}\n` } }] };
    if (answered === 1 && command) return { toolCalls: [{ name: 'run_command', arguments: { command } }] };
    return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'written', promiseEvidence: file } }] };
  };
}

/**
 * An agent that works through every iteration it has (issue 34's bench): in each one it writes
 * the file its task names (`WRITE <file>`, a module whose value is the iteration's number) and
 * ends the iteration with a line of text; in the last one it completes instead.
 */
export function iterationsAgent(latencyMs: number): Step {
  return async (request) => {
    await new Promise((resolve) => setTimeout(resolve, latencyMs));
    const messages = request.body?.messages ?? [];
    const text = messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
    const file = /WRITE (\S+)/.exec(text)?.[1] ?? 'x.js';
    const [, n, of] = /Iteration (\d+) of at most (\d+)/.exec(text) ?? ['', '1', '1'];
    if (messages.filter((m) => m.role === 'tool').length === 0)
      return { toolCalls: [{ name: 'write_file', arguments: { path: file, content: `exports.value = ${n};\n` } }] };
    if (n !== of) return { content: `iteration ${n}: ${file} written, more next time` };
    return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'written', promiseEvidence: file } }] };
  };
}

export type AgentKind = 'once' | 'iterations';

/** The agent's model served from a child process: its address, and how to stop it. */
export async function startModelProcess(latencyMs: number, kind: AgentKind = 'once'): Promise<{ url: string; close(): Promise<void> }> {
  const child = fork(__filename, [String(latencyMs), kind], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the bench's model process ended (exit ${code}) before it listened`)));
  });
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.disconnect();
      }),
  };
}

if (require.main === module && process.send) {
  void (async () => {
    const server = await startScriptedServer({
      loop: true,
      steps: [(process.argv[3] === 'iterations' ? iterationsAgent : agent)(Number(process.argv[2]))],
      defaultUsage: { prompt_tokens: 900, completion_tokens: 20 },
    });
    process.once('disconnect', () => void server.close().then(() => process.exit(0)));
    process.send?.({ url: server.url });
  })();
}
