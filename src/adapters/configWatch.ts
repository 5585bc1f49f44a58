import * as vscode from 'vscode';
import type { RalphConfig } from '../core/config/schema';
import type { ConfigService } from '../core/config/service';
import { ConfigError, errorMessage } from '../core/errors';
import type { ChannelLogger } from './logger';

/**
 * The editor's watch on `.ralph/config.json`: a save, a create or a delete tells the workspace's
 * ConfigService to re-read it, so its change event (and everything that reads the config)
 * follows the file without a restart. A malformed file gives one warning (with Open Config)
 * per distinct error and the service keeps the last good config.
 */
export function watchConfig(
  folder: vscode.WorkspaceFolder,
  config: ConfigService,
  logger: ChannelLogger,
  onChange?: (config: RalphConfig) => void,
): vscode.Disposable {
  let warned: string | undefined;
  const reload = (): void => {
    config.reload().then(
      () => {
        warned = undefined;
      },
      (error: unknown) => {
        const message = errorMessage(error);
        if (message === warned) return;
        warned = message;
        const kept = config.current ? ' The last valid configuration stays in use.' : '';
        logger.warn(`${message}${kept}`);
        if (error instanceof ConfigError) {
          void vscode.window.showWarningMessage(`Ralph: ${message}${kept}`, 'Open Config').then((choice) => {
            if (choice) void vscode.commands.executeCommand('ralph.openConfig');
          });
        }
      },
    );
  };
  const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, '.ralph/config.json'));
  const changed = config.onDidChange((next) => {
    logger.info('.ralph/config.json changed: the new configuration is in use (a running run keeps its own until it ends)');
    onChange?.(next);
  });
  // the first read, so the service knows the last good config before the first edit
  void config.load().catch(() => undefined);
  return vscode.Disposable.from(watcher, watcher.onDidChange(reload), watcher.onDidCreate(reload), watcher.onDidDelete(reload), changed);
}
