import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** File removals in flight at once while a tree is removed in this process (Windows). */
const IN_FLIGHT = 32;

/**
 * `fs.rm(target, { recursive: true, force: true })` without its memory. Node's own recursive
 * removal (20 and 22) starts every entry of every folder at once: a worktree in which an agent
 * created 100,000 files took about 250 MB of this process's memory to remove that way, and even
 * one file at a time leaves some 700 bytes of garbage per file in a long-lived process's heap.
 * Where there is `rm` (Linux, macOS) it removes the tree in a process of its own; elsewhere the
 * folders go one after another and the files of each `IN_FLIGHT` at a time. Whatever is left then
 * (nothing, or what could not go or appeared meanwhile) goes by `fs.rm`, with its own retries and
 * errors. A symbolic link is removed, never followed.
 */
export async function removeTree(target: string): Promise<void> {
  if (process.platform !== 'win32') await removeWithRm(target).catch(() => undefined);
  else await emptyFolder(target).catch(() => undefined);
  await fs.rm(target, { recursive: true, force: true });
}

function removeWithRm(target: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('rm', ['-rf', '--', path.resolve(target)], { windowsHide: true }, (error) => (error ? reject(error) : resolve()));
  });
}

async function emptyFolder(dir: string): Promise<void> {
  // a file, a link or nothing there: readdir throws and fs.rm above does what there is to do
  const entries = await fs.readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      await emptyFolder(full).catch(() => undefined);
      await fs.rmdir(full).catch(() => undefined);
    } else {
      files.push(full);
    }
  }
  for (let i = 0; i < files.length; i += IN_FLIGHT) {
    await Promise.all(files.slice(i, i + IN_FLIGHT).map((file) => fs.unlink(file).catch(() => undefined)));
  }
}
