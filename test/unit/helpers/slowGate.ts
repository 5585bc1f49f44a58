import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RecordedRequest, Step } from '../../fixtures/scriptedServer';
import { requestText } from './loopHarness';

/**
 * A gate that records when it ran: `node gate.js <stamps> <ms>` writes `<id>.start` as it starts
 * and `<id>.end` as it ends (the time in each, the folder it ran in in the name), green while the
 * `*.num` files add up to at most 10. In a task's own worktree (`.ralph/worktrees/T-…`) it takes
 * `ms` first — the merged checks and the runs at the base are quick — unless `<stamps>/fast`
 * exists (looked at every 50 ms, so a gate a killed run left behind ends soon too).
 */
export const GATE_JS = `const fs = require('fs');
const path = require('path');
const [dir, ms] = [process.argv[2], Number(process.argv[3] || 0)];
const where = path.basename(process.cwd());
const id = Date.now() + '-' + process.pid + '-' + where;
const stamp = (kind) => fs.writeFileSync(path.join(dir, id + '.' + kind), String(Date.now()));
stamp('start');
const total = fs.readdirSync('.').filter((f) => f.endsWith('.num')).reduce((n, f) => n + Number(fs.readFileSync(f, 'utf8')), 0);
const until = Date.now() + (/^T-/.test(where) ? ms : 0);
const finish = () => {
  stamp('end');
  if (total > 10) { console.error('total ' + total + ' exceeds 10'); process.exit(1); }
  console.log('total ' + total + ' ok');
};
const tick = () => (Date.now() >= until || fs.existsSync(path.join(dir, 'fast')) ? finish() : setTimeout(tick, 50));
tick();
`;

/** One gate process as its stamps tell it: where it ran, when it started and (unless killed) ended. */
export interface GateStamp {
  where: string;
  start: number;
  end?: number;
}

export async function readStamps(dir: string): Promise<GateStamp[]> {
  const runs = new Map<string, GateStamp>();
  for (const name of await fs.readdir(dir)) {
    const match = /^(\d+-\d+-(.+))\.(start|end)$/.exec(name);
    if (!match) continue;
    const run = runs.get(match[1]) ?? { where: match[2], start: 0 };
    const time = Number(await fs.readFile(path.join(dir, name), 'utf8'));
    if (match[3] === 'start') run.start = time;
    else run.end = time;
    runs.set(match[1], run);
  }
  return [...runs.values()].sort((a, b) => a.start - b.start);
}

/** The gate runs in a task's own worktree (its iterations' gates). */
export const ownGates = (stamps: readonly GateStamp[], taskId?: string) =>
  stamps.filter((s) => (taskId ? s.where === taskId : /^T-/.test(s.where)));

export function gateConfig(stamps: string, ms: number) {
  return [{ name: 'check', command: `node gate.js ${stamps} ${ms}`, kind: 'custom' as const, required: true }];
}

/** The `WRITE <file> <<content>>` of a request's task prompt. */
export function planOf(request: RecordedRequest): { file: string; content: string } {
  const user = (request.body?.messages ?? []).find((m) => m.role === 'user');
  const text = typeof user?.content === 'string' ? user.content : '';
  const match = /WRITE (\S+) <<(.*?)>>/s.exec(text);
  if (!match) throw new Error(`no WRITE instruction: ${text.slice(0, 200)}`);
  return { file: match[1], content: match[2] };
}

/**
 * The scripted agent of every task: writes its file (`1` instead once told its total exceeds
 * 10: the agent sent back by its own gates mends its work), then completes. `hold(file)` may
 * keep a task's first call waiting (a long model turn the test ends when it wants).
 */
export function slotAgent(hold: (file: string) => Promise<void> | undefined = () => undefined): Step {
  return async (request) => {
    const { file, content } = planOf(request);
    if ((request.body?.messages ?? []).at(-1)?.role === 'tool')
      return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${file}`, promiseEvidence: `${file} written` } }] };
    await hold(file);
    const mended = /exceeds 10/.test(requestText(request));
    return { toolCalls: [{ name: 'write_file', arguments: { path: file, content: mended ? '1' : content } }] };
  };
}

/** When the task writing `file` made its first model call (undefined: never). */
export function firstCallOf(requests: readonly RecordedRequest[], file: string): number | undefined {
  return requests.find((r) => r.path.endsWith('/chat/completions') && r.body !== undefined && planOfSafe(r) === file)?.time;
}

function planOfSafe(request: RecordedRequest): string | undefined {
  try {
    return planOf(request).file;
  } catch {
    return undefined;
  }
}

/** Makes the gates quick from now on (a slow one still running ends within 50 ms). */
export async function gatesFast(stamps: string): Promise<void> {
  if (!existsSync(path.join(stamps, 'fast'))) await fs.writeFile(path.join(stamps, 'fast'), '');
}
