import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ConfigError } from '../errors';

/**
 * Writes `data` to `file` so that readers see either the old or the new content, never a
 * torn file: write a sibling temp file, fsync it, rename it over the target.
 */
export async function writeFileAtomic(file: string, data: string): Promise<void> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true });
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await fs.open(temp, 'w');
  try {
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
}

export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * The file's text, or `undefined` when it does not exist. A directory where the file should be,
 * or a file where a parent directory should be (`.ralph` a file), is bad input: a ConfigError
 * naming the path, never a raw EISDIR.
 */
export async function readTextIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'EISDIR') throw new ConfigError(`${file} is a directory, but it must be a file; move it away and run again`, file);
    if (code === 'ENOTDIR') throw new ConfigError(`${file}: a parent of it is a file, not a directory (is .ralph a file?); move it away and run again`, file);
    throw error;
  }
}
