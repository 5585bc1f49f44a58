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
