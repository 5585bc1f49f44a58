/** The OpenAI-compatible adapter of the ModelClient port (OpenAI, Azure, OpenRouter, Ollama, vLLM…). */

import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, OpenAI } from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { ModelError, type ModelFaultKind } from '../errors';
import { faultLabel, faultOf, type ProviderErrorBody, retryableFault } from './faults';
import { StreamAssembler, StreamTruncatedError, toWireMessages, toWireTools } from './openaiWire';
import { abortError, defaultSleep, type HeaderSource, type Sleep, withRetries } from './retry';
import type { ChatRequest, ChatResponse, ModelClient, RetryNotice } from './types';
import { IdleWatchdog } from '../util/idleWatchdog';

export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAIClientOptions {
  /** Sent as the bearer token; never echoed in errors. Keyless local servers get a placeholder. */
  apiKey: string;
  /** Defaults to OpenAI itself; deliberately not read from OPENAI_BASE_URL (config is the source of truth). */
  baseUrl?: string;
  /**
   * Longest the client waits without progress: for the response headers, and then between two
   * streamed chunks. A stalled attempt is abandoned and retried like any other timeout.
   */
  timeoutMs: number;
  /** Retries after the first attempt (0 = try once). */
  maxRetries: number;
  /** Called before each retry's wait, for events and logs. */
  onRetry?: (notice: RetryNotice) => void;
  /** The wait between attempts; injectable so tests record delays instead of sleeping. */
  sleep?: Sleep;
  /** Custom fetch (proxies, tests); defaults to the global one. */
  fetch?: typeof globalThis.fetch;
  /**
   * Where the key came from, named in authentication faults (e.g. `the environment variable
   * OPENAI_API_KEY`); never the key itself.
   */
  keySource?: string;
}

/** What went wrong with one attempt, and whether another attempt may help. */
interface Failure {
  retryable: boolean;
  fault: ModelFaultKind;
  reason: string;
  status?: number;
  headers?: HeaderSource;
}

/** Our own per-attempt watchdog fired (no headers or no chunk within timeoutMs). */
class AttemptTimeoutError extends Error {}

const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
const CONNECTION_MESSAGE = /terminated|socket hang up|other side closed|ECONNRESET|network error|fetch failed/i;
const KEYLESS_PLACEHOLDER = 'no-key';

export class OpenAIModelClient implements ModelClient {
  private readonly sdk: OpenAI;
  private readonly endpoint: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: OpenAIClientOptions) {
    const baseURL = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.timeoutMs = Math.max(1, Math.round(options.timeoutMs));
    this.endpoint = `${displayUrl(baseURL)}/chat/completions`;
    this.sdk = new OpenAI({
      // The SDK refuses an empty key, but Ollama and LM Studio need none.
      apiKey: options.apiKey || KEYLESS_PLACEHOLDER,
      baseURL,
      maxRetries: 0,
      timeout: this.timeoutMs,
      logLevel: 'off',
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    return withRetries(
      {
        maxRetries: this.options.maxRetries,
        sleep: this.options.sleep ?? defaultSleep,
        signal: request.signal,
        onRetry: [this.options.onRetry, request.onRetry],
        // undefined: a bug on our side (or in onDelta), not the endpoint's
        classify: (error) => classify(error, this.timeoutMs),
        notice: (failure) => ({ reason: this.redact(failure.reason), fault: failure.fault }),
        fail: (failure, attempts) => this.modelError(failure, attempts),
      },
      () => this.attempt(request),
    );
  }

  /** One streamed request, from sending to the last chunk. */
  private async attempt(request: ChatRequest): Promise<ChatResponse> {
    const controller = new AbortController();
    const forwardAbort = () => controller.abort(request.signal?.reason);
    request.signal?.addEventListener('abort', forwardAbort, { once: true });
    // The SDK's own timeout stops at the response headers; this watchdog also covers a stream
    // that goes quiet half-way, which would otherwise hang the iteration forever.
    const watchdog = new IdleWatchdog(this.timeoutMs, () => controller.abort());
    try {
      watchdog.rearm();
      const stream = await this.sdk.chat.completions.create(this.body(request), { signal: controller.signal });
      const assembler = new StreamAssembler(request.model, request.onDelta);
      for await (const chunk of stream) {
        watchdog.rearm();
        assembler.add(chunk);
      }
      // The SDK ends an aborted stream silently, as if it had completed: check why it ended.
      if (watchdog.fired) throw new AttemptTimeoutError();
      if (request.signal?.aborted) throw abortError(request.signal);
      return assembler.finish();
    } catch (error) {
      throw watchdog.fired ? new AttemptTimeoutError() : error;
    } finally {
      watchdog.stop();
      request.signal?.removeEventListener('abort', forwardAbort);
    }
  }

  private body(request: ChatRequest): ChatCompletionCreateParamsStreaming {
    return {
      model: request.model,
      messages: toWireMessages(request.messages),
      ...(request.tools?.length ? { tools: toWireTools(request.tools) } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.maxTokens !== undefined ? { max_completion_tokens: request.maxTokens } : {}),
      stream: true,
      stream_options: { include_usage: true },
    };
  }

  private modelError(failure: Failure, attempts: number): ModelError {
    const source = this.options.keySource ?? 'the configured API key';
    const hint = failure.fault === 'auth' ? ` (check the API key from ${source} and its permissions)` : '';
    const tries = failure.retryable ? ` after ${attempts} attempt${attempts === 1 ? '' : 's'}` : '';
    const kind = failure.fault === 'unknown' ? '' : ` (${faultLabel(failure.fault)})`;
    const message = `model request to ${this.endpoint} failed${tries}${kind}: ${failure.reason}${hint}`;
    return new ModelError(this.redact(message), failure.status, failure.retryable, failure.fault);
  }

  /**
   * Servers sometimes echo the key back, in full or masked (OpenAI: "Incorrect API key
   * provided: sk-abc***wxyz"); none of it leaves this class.
   */
  private redact(text: string): string {
    const key = this.options.apiKey;
    const whole = key.length >= 4 ? text.split(key).join('[redacted]') : text;
    return whole.replace(/\b(sk|rk|pk)-[A-Za-z0-9_*-]{4,}/g, '[redacted]');
  }
}

function classify(error: unknown, timeoutMs: number): Failure | undefined {
  if (error instanceof AttemptTimeoutError || error instanceof APIConnectionTimeoutError) {
    return { retryable: true, fault: 'outage', reason: `no response within ${timeoutMs} ms` };
  }
  if (error instanceof APIUserAbortError) return { retryable: false, fault: 'unknown', reason: 'request aborted' };
  if (error instanceof APIConnectionError) {
    return { retryable: true, fault: 'outage', reason: `connection failed (${describeCause(error)})` };
  }
  if (error instanceof APIError) {
    if (typeof error.status === 'number') return statusFailure(error.status, error);
    // An `error` object inside the stream: the provider failed after the response had started
    // (OpenRouter sends `{ error: { code: 502, message } }` in a chunk).
    const fault = faultOf(undefined, error.error as ProviderErrorBody | undefined);
    return { retryable: retryableFault(fault), fault, reason: `error event in the stream: ${detail(error)}` };
  }
  if (error instanceof StreamTruncatedError) return { retryable: true, fault: 'outage', reason: error.message };
  if (error instanceof SyntaxError) return { retryable: true, fault: 'outage', reason: `malformed response (${error.message})` };
  if (isConnectionError(error)) {
    return { retryable: true, fault: 'outage', reason: `connection lost mid-stream (${describeCause(error)})` };
  }
  return undefined;
}

function statusFailure(status: number, error: APIError): Failure {
  const fault = faultOf(status, error.error as ProviderErrorBody | undefined);
  // the server may veto a retry; it cannot make an exhausted quota or a bad key worth retrying
  const told = error.headers?.get('x-should-retry');
  const retryable = told === 'false' ? false : told === 'true' ? retryableFault(fault) || fault === 'unknown' : retryableFault(fault);
  const text = detail(error);
  return {
    retryable,
    fault,
    reason: `HTTP ${status}${text ? ` ${text}` : ''}`,
    status,
    ...(error.headers ? { headers: error.headers } : {}),
  };
}

/** The server's own error message, without the SDK's status prefix, kept short. */
function detail(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  const text = typeof body?.message === 'string' ? body.message : error.message.replace(/^\d{3}\s*/, '');
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e !== undefined && e !== null && chain.length < 6; e = (e as { cause?: unknown }).cause) {
    chain.push(e);
  }
  return chain;
}

function isConnectionError(error: unknown): boolean {
  return causes(error).some((e) => {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
    return e instanceof Error && CONNECTION_MESSAGE.test(e.message);
  });
}

/** The innermost message of an error chain, e.g. "other side closed" under "fetch failed". */
function describeCause(error: unknown): string {
  const chain = causes(error).filter((e): e is Error => e instanceof Error);
  const innermost = chain[chain.length - 1];
  const code = (innermost as { code?: unknown } | undefined)?.code;
  const text = innermost?.message ?? String(error);
  return typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text;
}

/** The endpoint as shown in messages: without user:password or query string. */
function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    return parsed.toString().replace(/\/+$/, '');
  } catch {
    return url;
  }
}
