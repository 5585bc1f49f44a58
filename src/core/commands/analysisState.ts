import type { Parser } from 'web-tree-sitter';
import { type PathContext, resolvePath } from './commandPaths';
import type { Verdict } from './commandRules';
import { containsDownloader } from './commandSources';
import type { SyntaxNode } from './shellParser';
import type { ShellWord } from './shellWords';

/** Something in a command line the rules refuse or ask about; `command` is the simple command it is in. */
export interface Finding extends Verdict {
  command: string;
}

/** What the analysis of one command line carries from command to command: where it runs, what it downloaded, what it found. */
export interface State {
  parser: Parser;
  where: PathContext;
  findings: Finding[];
  commands: string[];
  /** Files a downloader writes earlier in the line (`curl -o x.sh …`, `wget … > x.sh`), by absolute path. */
  downloaded: Set<string>;
  /** A downloader saved under a name only it knows (`curl -O`, `wget URL`). */
  downloadedUnnamed: boolean;
  /** Script files the line runs (`./x.sh`, `node x.js`, `bash x.sh`, `source x`), for the policy to compare with the task's changes. */
  scripts: ScriptRun[];
  /** Files the line writes by a redirect or a known writer, by absolute path; `writtenUnknown`: one known only at run time. */
  written: Set<string>;
  writtenUnknown: boolean;
  /** The simple command being judged, normalised: what a script run is matched against in `commands.allow`. */
  current: string;
  /** Variables of the enclosing `for` loops whose values are spelled out (loopValues.ts). */
  loops: Map<string, readonly string[]>;
}

/** A script file a command line runs; `path` undefined when the directory it runs in is known only at run time. */
export interface ScriptRun {
  path: string | undefined;
  shown: string;
  command: string;
  /** Counts only when the file exists (a module `python -m` may find there). */
  ifExists?: boolean;
}

/** A script run by path: refused when the same line downloaded it. */
export function judgeScriptFile(st: State, file: ShellWord, options: { ifExists?: boolean } = {}): Verdict[] {
  const abs = file.value === undefined ? undefined : resolvePath(file.value, st.where);
  if (file.value !== undefined) st.scripts.push({ path: abs, shown: file.text, command: st.current, ...options });
  if (abs !== undefined && st.downloaded.has(abs)) return [{ action: 'deny', reason: `running a downloaded script (${file.text})` }];
  if (st.downloadedUnnamed)
    return [{ action: 'ask', reason: `running ${file.text} after downloading files under names only the downloader knows` }];
  return [];
}

/** Where a downloader saves (`curl URL > file` is recorded by the redirect instead). */
export function recordDownloads(st: State, name: string, args: ShellWord[]): void {
  const outputs = name === 'wget' ? ['-O', '--output-document'] : ['-o', '--output'];
  let named = false;
  args.forEach((a, i) => {
    const v = a.value ?? '';
    const inline = outputs.find((o) => o.startsWith('--') && v.startsWith(`${o}=`));
    const short = outputs[0].slice(1); // `-so file`: the output option last in a cluster of short ones
    const clustered = new RegExp(`^-[a-zA-Z]*${short}$`).test(v);
    const file = outputs.includes(v) || clustered ? args[i + 1]?.value : inline ? v.slice(inline.length + 1) : undefined;
    if (file === undefined) return;
    named = true;
    const abs = resolvePath(file, st.where);
    if (abs !== undefined) st.downloaded.add(abs);
  });
  if (name === 'wget' && !named && !args.some((a) => a.value === '-qO-' || a.value === '-O-')) st.downloadedUnnamed = true;
  if (name === 'curl' && args.some((a) => a.value === '-O' || a.value === '--remote-name' || /^-[a-zA-Z]*O[a-zA-Z]*$/.test(a.value ?? '')))
    st.downloadedUnnamed = true;
}

/** A script read from a process substitution (`bash <(…)`, `source <(…)`): refused when it is a download. */
export function judgeGeneratedScript(substitution: SyntaxNode): Verdict {
  if (containsDownloader(substitution)) return { action: 'deny', reason: 'running a downloaded script' };
  return { action: 'ask', reason: `running a script produced by \`${excerpt(substitution.text)}\`` };
}

export function changeDirectory(dir: ShellWord | undefined, where: PathContext): string | undefined {
  if (!dir) return resolvePath('~', where);
  if (dir.value === undefined || dir.value === '-') return undefined;
  return resolvePath(dir.value, where);
}

export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= 120 ? flat : `${flat.slice(0, 117)}…`;
}
