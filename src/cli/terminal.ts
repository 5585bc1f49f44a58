import * as readline from 'node:readline';

/** One line of text asked on the terminal; Ctrl-C or the end of input give undefined. */
export function askLine(question: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
    let settled = false;
    const done = (answer: string | undefined) => {
      if (settled) return;
      settled = true;
      rl.close();
      resolve(answer);
    };
    rl.on('SIGINT', () => {
      done(undefined);
      process.emit('SIGINT');
    });
    rl.on('close', () => done(undefined));
    rl.question(question, (answer) => done(answer));
  });
}

/** One y/N question on the terminal; Ctrl-C answers no and stops the run as usual. */
export async function askOnTerminal(question: string): Promise<boolean> {
  return /^y(es)?$/i.test((await askLine(question))?.trim() ?? '');
}

/**
 * Why nobody is there to answer a run, whatever the terminal: a CI system (`CI` set, as every CI
 * service sets it, and not "false" or "0") or a GitHub Actions job (`GITHUB_ACTIONS=true`).
 * Undefined when a person may be there (then a run without a terminal is unattended too).
 */
export function nobodyToAsk(env: NodeJS.ProcessEnv): string | undefined {
  if (env.GITHUB_ACTIONS === 'true') return 'a GitHub Actions job';
  const ci = env.CI?.trim().toLowerCase();
  if (ci && ci !== 'false' && ci !== '0') return 'CI';
  return undefined;
}
