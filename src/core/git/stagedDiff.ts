import type { SecretGuard } from './gitService';

/**
 * Reads what is staged as `git diff --cached -z --raw` prints it — and, with a secret guard, the
 * `-U0` patch `--patch-with-raw` puts after it — piece by piece, as git prints it: the staged
 * paths (raw and NUL-separated, so never quoted; a rename's or copy's new path) and the files
 * whose added lines hold a known secret value (withheld from the commit: a key never enters the
 * history, where it would outlive any later fix). Each raw entry is `:<modes> <shas> <status>`
 * then its path, or its two paths, each ended by a NUL; a NUL more, then the patch. What is held
 * at a time is a piece of git's output and the line it ends in, never the whole diff: an iteration
 * that created 100,000 files prints tens of MB here.
 */
export class StagedDiffReader {
  private readonly files: string[] = [];
  private readonly withheld = new Set<string>();
  /** The start of an entry or a line whose end has not come yet. */
  private rest = '';
  private inPatch = false;
  /** The file the patch's lines are of (its `+++ ` header). */
  private current: string | undefined;

  constructor(private readonly secrets?: SecretGuard) {}

  push(text: string): void {
    if (this.inPatch) return this.patchText(text);
    this.rest += text;
    this.readRaw(false);
    if (!this.inPatch) return;
    const left = this.rest;
    this.rest = '';
    this.patchText(left);
  }

  /** All of git's output read: the staged paths, and the files withheld for a secret (in the patch's order). */
  end(): { files: string[]; withheld: string[] } {
    if (!this.inPatch) this.readRaw(true);
    if (this.rest) this.readLines(this.rest);
    this.rest = '';
    return { files: this.files, withheld: [...this.withheld] };
  }

  private readRaw(final: boolean): void {
    const text = this.rest;
    let at = 0;
    while (at < text.length) {
      if (text[at] !== ':') {
        this.inPatch = true;
        if (text[at] === '\0') at++;
        break;
      }
      const entry = rawEntry(text, at, final);
      if (!entry) break;
      this.files.push(entry.path);
      at = entry.next;
    }
    this.rest = text.slice(at);
  }

  /** Whole lines are read now; the last one's start waits for its end (found in the new text only: a long line is never searched again). */
  private patchText(text: string): void {
    const end = text.lastIndexOf('\n');
    if (end < 0) {
      this.rest += text;
      return;
    }
    const lines = this.rest + text.slice(0, end + 1);
    this.rest = text.slice(end + 1);
    this.readLines(lines);
  }

  private readLines(block: string): void {
    if (!this.secrets) return;
    // a secret is looked for line by line only in a piece that holds one
    const holds = this.secrets.contains(block);
    for (const line of block.split('\n')) {
      // git ends the header with a tab when the path has a space
      if (line.startsWith('+++ ')) this.current = line === '+++ /dev/null' ? undefined : line.slice(6).replace(/\t$/, '');
      else if (holds && this.current && line.startsWith('+') && this.secrets.contains(line)) this.withheld.add(this.current);
    }
  }
}

/** The raw entry at `at`: its path (a rename's new one) and where the next starts; undefined while its end has not come. */
function rawEntry(text: string, at: number, final: boolean): { path: string; next: number } | undefined {
  let from = at;
  const field = (): string | undefined => {
    const end = text.indexOf('\0', from);
    if (end < 0 && !final) return undefined;
    const value = text.slice(from, end < 0 ? text.length : end);
    from = end < 0 ? text.length : end + 1;
    return value;
  };
  const status = field();
  const first = status === undefined ? undefined : field();
  if (status === undefined || first === undefined) return undefined;
  if (!/^[RC]/.test(status.split(' ').at(-1) ?? '')) return { path: first, next: from };
  const second = field();
  return second === undefined ? undefined : { path: second, next: from };
}
