import { watch, type FSWatcher } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import type { RalphPaths } from '../paths';
import { readTextIfExists } from '../util/atomicWrite';
import { parseConfigText } from './load';
import type { RalphConfig } from './schema';

type Listener = (config: RalphConfig) => void;

/**
 * The one way the CLI and the extension read `.ralph/config.json`: validated (strict, with
 * did-you-mean errors), re-read on every `load()` so an edit is never missed, with a change
 * event when the validated config differs from the last one. A malformed file throws and keeps
 * the last good config (`current`). The workspace's façade (`openRalph`, core/ralph.ts) holds
 * the one instance of its workspace.
 */
export class ConfigService {
  private readonly listeners = new Set<Listener>();
  private readonly writeListeners = new Set<() => void>();
  private lastText: string | undefined | null = null;
  private last: RalphConfig | undefined;
  private watcher: FSWatcher | undefined;

  constructor(readonly paths: RalphPaths) {}

  /** The current config; throws a ConfigError naming the file and each bad key. */
  async load(): Promise<RalphConfig> {
    const text = await readTextIfExists(this.paths.config);
    // a copy: a caller that adjusts its config must not change what the next caller gets
    if (text === this.lastText && this.last) return structuredClone(this.last);
    const config = parseConfigText(text, this.paths.relative(this.paths.config));
    // an edit that changes nothing validated (spacing, key order) is no change
    const changed = this.last !== undefined && !isDeepStrictEqual(this.last, config);
    this.lastText = text;
    this.last = config;
    if (changed) for (const listener of this.listeners) listener(config);
    return structuredClone(config);
  }

  /** Ralph itself wrote the file (`editConfig`): a running loop's guard takes that content as its own. */
  wrote(): void {
    for (const listener of this.writeListeners) listener();
  }

  /** Told each time Ralph itself writes the file (not the agents, not a person's editor). */
  onDidWrite(listener: () => void): { dispose(): void } {
    this.writeListeners.add(listener);
    return { dispose: () => this.writeListeners.delete(listener) };
  }

  /** Re-reads the file now (e.g. after a watcher saw it change). */
  async reload(): Promise<RalphConfig> {
    this.lastText = null;
    return this.load();
  }

  /** The last valid config a load found (a malformed edit since does not replace it); undefined before the first. */
  get current(): RalphConfig | undefined {
    return this.last ? structuredClone(this.last) : undefined;
  }

  /** Told each time a load finds a different valid config; starts watching the `.ralph/` directory. */
  onDidChange(listener: Listener): { dispose(): void } {
    this.listeners.add(listener);
    if (!this.watcher) {
      try {
        this.watcher = watch(this.paths.dir, (_event, name) => {
          if (name === 'config.json') void this.load().catch(() => undefined);
        });
        this.watcher.unref();
      } catch {
        // no .ralph/ yet: changes are still seen on the next load()
      }
    }
    return {
      dispose: () => {
        this.listeners.delete(listener);
        if (this.listeners.size === 0) {
          this.watcher?.close();
          this.watcher = undefined;
        }
      },
    };
  }
}

/**
 * Reads `.ralph/config.json` once, validated like the service's; a missing file means every
 * default. For work that has no façade at hand (`ralph init`, a gate's task provider).
 */
export async function loadConfig(paths: RalphPaths): Promise<RalphConfig> {
  return new ConfigService(paths).load();
}
