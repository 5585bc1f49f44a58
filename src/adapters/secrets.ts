import type * as vscode from 'vscode';
import type { SecretSource } from '../core/ports';

const KEY = 'ralph.apiKey';

/**
 * The API key lives in VS Code's SecretStorage (the OS keychain); the environment variable named
 * by `llm.apiKeyEnv` is the fallback. The key is never logged, written to a file or sent to a webview.
 */
export class SecretStorageSource implements SecretSource {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  async getApiKey(envName: string): Promise<string | undefined> {
    return (await this.secrets.get(KEY)) || process.env[envName] || undefined;
  }

  async keySource(envName: string): Promise<string> {
    return (await this.secrets.get(KEY)) ? "VS Code's secret storage (Ralph: Set API Key)" : `the environment variable ${envName}`;
  }

  async store(key: string): Promise<void> {
    await this.secrets.store(KEY, key);
  }

  async clear(): Promise<void> {
    await this.secrets.delete(KEY);
  }

  async has(): Promise<boolean> {
    return Boolean(await this.secrets.get(KEY));
  }
}
