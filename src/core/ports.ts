/** Ports through which the core reaches the outside; the extension and the CLI supply adapters. */

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** Where API keys come from: SecretStorage in the extension, the environment in the CLI. */
export interface SecretSource {
  getApiKey(envName: string): Promise<string | undefined>;
}

/** Asks a human to approve an action; refuses when nobody can answer. */
export interface ApprovalPrompt {
  approve(request: { title: string; detail: string }): Promise<boolean>;
}

/** The default when no human can be asked: nothing is approved. */
export const refuseApprovals: ApprovalPrompt = { approve: async () => false };

export interface Disposable {
  dispose(): void;
}
