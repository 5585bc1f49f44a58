import type { ChatMessage, ChatRequest, ChatResponse, ModelClient, TokenCounter } from '../llm/types';

/**
 * Names of variables that hold credentials by convention. Matched case-insensitively against
 * the whole name: `OPENAI_API_KEY`, `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `DB_PASSWORD`…
 */
const SECRET_NAME_PATTERNS: readonly RegExp[] = [
  /(^|_)(API_?)?KEY$/i,
  /(^|_)KEYS$/i,
  /TOKEN/i,
  /SECRET/i,
  /PASSWORD/i,
  /PASSWD/i,
  /(^|_)PASS$/i,
  /PASSPHRASE/i,
  /CREDENTIAL/i,
  /(^|_)AUTH$/i,
  /AUTH_?TOKEN/i,
  /PRIVATE_?KEY/i,
  /(^|_)COOKIE/i,
  /SESSION_?ID$/i,
  /^AWS_ACCESS_KEY_ID$/i,
  /^(NPM|NODE)_AUTH/i,
  /^SSH_AUTH_SOCK$/i,
  /_DSN$/i,
  /DATABASE_URL$/i,
];

/** Well-known provider key variables, scrubbed even when they do not look like `*_KEY`. */
const PROVIDER_KEY_VARIABLES: readonly string[] = [
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'AZURE_OPENAI_API_KEY',
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
  'MISTRAL_API_KEY',
  'GROQ_API_KEY',
  'OPENROUTER_API_KEY',
  'DEEPSEEK_API_KEY',
  'TOGETHER_API_KEY',
  'HF_TOKEN',
  'HUGGING_FACE_HUB_TOKEN',
];

/** Values shorter than this are not redacted from text: "1", "true" would garble every output. */
export const MIN_SECRET_VALUE_LENGTH = 8;

export function isSecretName(name: string): boolean {
  if (PROVIDER_KEY_VARIABLES.includes(name.toUpperCase())) return true;
  return SECRET_NAME_PATTERNS.some((pattern) => pattern.test(name));
}

export interface ScrubOptions {
  /** `llm.apiKeyEnv` and any other provider key variable the configuration names. */
  keyVariables: readonly string[];
  /** `commands.env`: variables passed through on purpose, even when their name looks secret. */
  passThrough: readonly string[];
}

export interface ScrubResult {
  env: Record<string, string>;
  /** Names removed (for diagnostics; never their values). */
  removed: string[];
  /** Values of the removed variables that are long enough to redact from text. */
  values: string[];
}

/**
 * The environment minus every credential: the configured key variables, well-known provider
 * keys and anything named like a secret. Variables in `passThrough` stay, on purpose.
 */
export function scrubEnvironment(env: NodeJS.ProcessEnv, options: ScrubOptions): ScrubResult {
  const pass = new Set(options.passThrough);
  const keys = new Set(options.keyVariables.map((name) => name.toUpperCase()));
  const out: Record<string, string> = {};
  const removed: string[] = [];
  const values: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (!pass.has(name) && (keys.has(name.toUpperCase()) || isSecretName(name))) {
      removed.push(name);
      if (value.length >= MIN_SECRET_VALUE_LENGTH) values.push(value);
      continue;
    }
    out[name] = value;
  }
  return { env: out, removed, values };
}

const MARK = '[REDACTED]';

/**
 * Replaces every known secret value in text. The second line of defence: the first is that
 * no command ever sees the secret; this catches what reaches text another way (a file that
 * contains the key, an error message of the client).
 */
export class SecretRedactor {
  private readonly values = new Set<string>();
  private pattern: RegExp | undefined;

  constructor(values: Iterable<string> = []) {
    this.add(...values);
  }

  add(...values: string[]): void {
    let changed = false;
    for (const value of values) {
      const trimmed = value.trim();
      if (trimmed.length < MIN_SECRET_VALUE_LENGTH || this.values.has(trimmed)) continue;
      this.values.add(trimmed);
      changed = true;
    }
    if (changed) {
      // Longest first, so a secret that contains another is replaced whole.
      const sorted = [...this.values].sort((a, b) => b.length - a.length).map(escapeRegExp);
      this.pattern = new RegExp(sorted.join('|'), 'g');
    }
  }

  get size(): number {
    return this.values.size;
  }

  redact(text: string): string {
    if (!this.pattern || text.length === 0) return text;
    return text.replace(this.pattern, MARK);
  }

  /** Whether `text` holds any known secret value. */
  contains(text: string): boolean {
    if (!this.pattern) return false;
    this.pattern.lastIndex = 0;
    const found = this.pattern.test(text);
    this.pattern.lastIndex = 0;
    return found;
  }

  /** A copy of a JSON-like value with every string redacted (events, reports). */
  redactDeep<T>(value: T): T {
    if (!this.pattern) return value;
    return this.walk(value, 0) as T;
  }

  private walk(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (depth > 32 || value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((item) => this.walk(item, depth + 1));
    if (Object.getPrototypeOf(value) !== Object.prototype) return value;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = this.walk(item, depth + 1);
    return out;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Every message is redacted before it leaves for the model: tool results, file contents,
 * gate feedback, whatever path a secret took into the conversation.
 */
export class RedactingModelClient implements ModelClient {
  constructor(
    private readonly inner: ModelClient,
    private readonly redactor: SecretRedactor,
  ) {}

  chat(request: ChatRequest): Promise<ChatResponse> {
    if (this.redactor.size === 0) return this.inner.chat(request);
    return this.inner.chat({ ...request, messages: this.redactAll(request.messages) });
  }

  /** Counting may reach the provider too, so it sees the same redacted messages. */
  get tokens(): TokenCounter | undefined {
    const inner = this.inner.tokens;
    if (!inner) return undefined;
    return {
      countTokens: (model, messages, tools, signal) =>
        inner.countTokens(model, this.redactor.size === 0 ? messages : this.redactAll(messages), tools, signal),
      maxInputTokens: (model) => inner.maxInputTokens(model),
    };
  }

  private redactAll(messages: readonly ChatMessage[]): ChatMessage[] {
    return messages.map((message) => {
      if (message.role === 'assistant')
        return {
          ...message,
          content: message.content === null ? null : this.redactor.redact(message.content),
          toolCalls: message.toolCalls?.map((call) => ({ ...call, arguments: this.redactor.redact(call.arguments) })),
        };
      return { ...message, content: this.redactor.redact(message.content) };
    });
  }
}

/** The redactor of a run: the API key value plus every credential found in the environment. */
export function redactorFor(env: NodeJS.ProcessEnv, options: ScrubOptions, extraValues: readonly string[] = []): SecretRedactor {
  return new SecretRedactor([...scrubEnvironment(env, options).values, ...extraValues]);
}
