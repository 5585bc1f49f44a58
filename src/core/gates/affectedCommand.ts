/**
 * How a test gate's command runs a part of its suite (issue 34): the runner it calls, found in
 * the command itself or in the one npm script it runs, and the command that runs only some test
 * files. Nothing is guessed: a command or script that is more than one plain call of a runner
 * Ralph knows, that names its own test files, or whose runner would add files of its own config
 * to the ones it is given, cannot be narrowed — `why` then says so, and the whole suite runs.
 */

export type SelectingRunner = 'jest' | 'vitest' | 'mocha' | 'node:test' | 'ava' | 'tap' | 'pytest';

export interface RunnerCall {
  runner: SelectingRunner;
  /** The command to extend: the gate's own; `--` is put before the arguments when it runs an npm script. */
  command: string;
  viaNpm: boolean;
}

/** What the workspace says of its runners: package.json's scripts and runner sections, which config files exist. */
export interface RunnerSetting {
  scripts: Readonly<Record<string, string>>;
  /** package.json's `mocha` section. */
  mochaSection?: unknown;
  /** Files of the workspace's root folder. */
  rootFiles: ReadonlySet<string>;
  /** The major version of the installed tap, when tap is the runner. */
  tapMajor?: number;
}

/** Anything of the shell beyond words: chains, pipes, redirections, substitutions, quotes, globs. */
const SHELL = /[;&|<>`$()'"\\*?[\]{}\n]/;
/** Flags of the runners that take the next word as their value. */
const VALUE_FLAGS = new Set([
  '--reporter',
  '-R',
  '--timeout',
  '-t',
  '--config',
  '-c',
  '--require',
  '-r',
  '--ui',
  '-u',
  '--project',
  '--test-reporter',
  '--test-reporter-destination',
  '--import',
  '--loader',
  '--environment',
  '--jobs',
  '-j',
  '--maxWorkers',
  '-w',
  '--pool',
  '--slow',
  '-s',
]);

/** The runner `command` calls, or why its run cannot be narrowed to some test files. */
export function runnerCall(command: string, setting: RunnerSetting): RunnerCall | { why: string } {
  const words = command.trim().split(/\s+/);
  if (SHELL.test(command)) return { why: `the gate's command \`${command}\` is more than one plain call of a test runner` };
  const script = npmScript(words);
  if (script !== undefined) {
    const body = setting.scripts[script];
    if (body === undefined) return { why: `package.json has no script "${script}"` };
    if (SHELL.test(body)) return { why: `the script "${script}" (\`${body}\`) is more than one plain call of a test runner` };
    if (setting.scripts[`pre${script}`] !== undefined || setting.scripts[`post${script}`] !== undefined)
      return { why: `the script "${script}" has pre/post scripts, which would get the test files too` };
    const runner = runnerOf(body.trim().split(/\s+/), setting);
    return 'why' in runner
      ? { why: `the script "${script}" (\`${body}\`): ${runner.why}` }
      : { runner: runner.runner, command, viaNpm: true };
  }
  const runner = runnerOf(words, setting);
  return 'why' in runner ? { why: `\`${command}\`: ${runner.why}` } : { runner: runner.runner, command, viaNpm: false };
}

/** The script `npm test` / `npm run <name>` runs; undefined for any other command. */
function npmScript(words: readonly string[]): string | undefined {
  if (words[0] !== 'npm') return undefined;
  if ((words[1] === 'test' || words[1] === 't') && words.length === 2) return 'test';
  if ((words[1] === 'run' || words[1] === 'run-script') && words.length === 3) return words[2];
  return undefined;
}

/** The runner a plain call is of, its own arguments checked. */
function runnerOf(words: readonly string[], setting: RunnerSetting): { runner: SelectingRunner } | { why: string } {
  let rest = [...words];
  if (rest[0] === 'npx') rest = rest.slice(1).filter((w, i) => !(i === 0 && (w === '--no-install' || w === '--no')));
  const program = rest[0]?.replace(/^.*\//, '');
  let args = rest.slice(1);
  let runner: SelectingRunner | undefined;
  if (program === 'node' && args.includes('--test')) {
    runner = 'node:test';
    args = args.filter((a) => a !== '--test');
  } else if (program === 'jest' || program === 'mocha' || program === 'ava' || program === 'tap') runner = program;
  else if (program === 'pytest' || (/^python3?$/.test(program ?? '') && args[0] === '-m' && args[1] === 'pytest')) {
    runner = 'pytest';
    if (program !== 'pytest') args = args.slice(2);
  } else if (program === 'vitest') {
    runner = 'vitest';
    if (args[0] === 'run') args = args.slice(1);
    else if (args[0] && !args[0].startsWith('-')) return { why: `vitest's \`${args[0]}\` command is not a run of the suite` };
  }
  if (!runner)
    return {
      why: `\`${program ?? ''}\` is not a test runner whose files Ralph can choose (jest, vitest, mocha, node --test, ava, tap, pytest)`,
    };
  const named = positional(args);
  if (named.length > 0) return { why: `it names its own test files (\`${named.slice(0, 3).join(' ')}\`)` };
  if (runner === 'mocha' && mochaHasSpec(setting))
    return { why: 'mocha adds the spec of its config to the files it is given, so it would run them all' };
  return { runner };
}

/** Words that are neither flags nor a value flag's value. */
function positional(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith('-')) {
      if (VALUE_FLAGS.has(a)) i++;
      continue;
    }
    out.push(a);
  }
  return out;
}

function mochaHasSpec(setting: RunnerSetting): boolean {
  const section = setting.mochaSection as { spec?: unknown } | undefined;
  if (section && typeof section === 'object' && section.spec !== undefined) return true;
  // a config file's content is not read here: any config file may give a spec
  return ['.mocharc', '.mocharc.js', '.mocharc.cjs', '.mocharc.json', '.mocharc.jsonc', '.mocharc.yml', '.mocharc.yaml'].some((f) =>
    setting.rootFiles.has(f),
  );
}

/**
 * The command that runs only `files` with the runner of `call`: for jest the files its own
 * `--findRelatedTests` starts from (changed files and test files alike), for the others the test
 * files to run. Coverage is turned off where the runner has a switch for it: a part of a suite
 * never meets a whole suite's coverage threshold.
 */
export function narrowedCommand(call: RunnerCall, files: readonly string[], setting: Pick<RunnerSetting, 'tapMajor'>): string {
  const quoted = files.map(shellWord);
  const args: string[] = [];
  switch (call.runner) {
    case 'jest':
      args.push('--findRelatedTests', ...quoted, '--passWithNoTests', '--coverage=false');
      break;
    case 'vitest':
      args.push(...quoted, '--coverage.enabled=false');
      break;
    case 'tap':
      args.push(...quoted, (setting.tapMajor ?? 16) >= 18 ? '--disable-coverage' : '--no-coverage');
      break;
    default:
      args.push(...quoted);
  }
  return `${call.command}${call.viaNpm ? ' --' : ''} ${args.join(' ')}`;
}

/** A word for sh: as it is when plain, otherwise in single quotes. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
