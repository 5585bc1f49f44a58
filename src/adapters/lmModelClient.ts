/**
 * The editor-models adapter of the ModelClient port: the loop talks to the chat models VS Code
 * already has (GitHub Copilot, or any extension contributing one) through `vscode.lm`. The
 * mapping to and from the LM API lives in lmMapping.ts (pure, unit-tested); this file resolves
 * `llm.models` entries to models, streams, cancels, counts tokens and retries transient faults.
 */
import * as vscode from 'vscode';
import { ModelError } from '../core/errors';
import {
  type EditorModelInfo,
  matchEditorModels,
  parseEditorModelSelector,
  EDITOR_MODEL_SELECTOR_HELP,
  editorModelSelector,
} from '../core/config/editorModels';
import { abortError, defaultSleep, type Sleep, withRetries } from '../core/llm/retry';
import type { ChatMessage, ChatRequest, ChatResponse, ModelClient, RetryNotice, TokenCounter, ToolSpec } from '../core/llm/types';
import { classifyLmError, LmResponseAssembler, lmModelError, toLmMessages, toLmTools, type LmFailure, type LmShapes } from './lmMapping';
import { IdleWatchdog } from '../core/util/idleWatchdog';

/** Shown by VS Code in its consent dialog the first time Ralph Loop asks to use a model. */
export const LM_JUSTIFICATION =
  'Ralph Loop runs the tasks in .ralph/tasks.json: it sends each task, the files it reads and the output of the commands it runs to this model, and applies the edits the model asks for in this workspace (checkpointed in git).';

export interface LmClientOptions {
  /** Retries after the first attempt for transient faults (0 = try once). */
  maxRetries: number;
  /** Longest the client waits without a streamed part before it cancels and retries. */
  timeoutMs: number;
  onRetry?: (notice: RetryNotice) => void;
  sleep?: Sleep;
}

const shapes: LmShapes = vscode;

/** Editor models as plain facts, for quick picks and messages. */
export async function listEditorModels(): Promise<EditorModelInfo[]> {
  const models = await vscode.lm.selectChatModels();
  return models.map(({ id, name, vendor, family, version, maxInputTokens }) => ({ id, name, vendor, family, version, maxInputTokens }));
}

class LmTimeoutError extends Error {}

export class LmModelClient implements ModelClient, TokenCounter {
  private readonly resolved = new Map<string, vscode.LanguageModelChat>();
  private readonly counted = new Map<string, number>();
  private readonly subscription: vscode.Disposable;

  constructor(private readonly options: LmClientOptions) {
    // Models come and go (an extension is disabled, the person signs out): look them up again.
    this.subscription = vscode.lm.onDidChangeChatModels(() => this.resolved.clear());
  }

  get tokens(): TokenCounter {
    return this;
  }

  dispose(): void {
    this.subscription.dispose();
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    return withRetries<ChatResponse, LmFailure>(
      {
        maxRetries: this.options.maxRetries,
        sleep: this.options.sleep ?? defaultSleep,
        signal: request.signal,
        onRetry: [this.options.onRetry, request.onRetry],
        classify: (error) => {
          if (error instanceof ModelError) return undefined; // already final (a model that is not there)
          const failure =
            error instanceof LmTimeoutError
              ? ({ fault: 'outage', retryable: true, reason: `no reply within ${this.options.timeoutMs} ms` } as const)
              : classifyLmError(error, shapes);
          if (failure?.fault === 'not_found') this.resolved.delete(request.model);
          return failure;
        },
        notice: (failure) => ({ reason: `${failure.fault}: ${failure.reason}` }),
        fail: (failure, attempts) => lmModelError(request.model, failure, attempts),
      },
      () => this.attempt(request),
    );
  }

  private async attempt(request: ChatRequest): Promise<ChatResponse> {
    const model = await this.model(request.model);
    const messages = toLmMessages(request.messages, shapes);
    const cancel = new vscode.CancellationTokenSource();
    const onAbort = () => cancel.cancel();
    request.signal?.addEventListener('abort', onAbort, { once: true });
    const watchdog = new IdleWatchdog(this.options.timeoutMs, () => cancel.cancel());
    try {
      const options: vscode.LanguageModelChatRequestOptions = { justification: LM_JUSTIFICATION };
      if (request.tools?.length) options.tools = toLmTools(request.tools);
      if (request.temperature !== undefined) options.modelOptions = { temperature: request.temperature };
      // Not timed: the first request waits for the person to answer VS Code's consent dialog.
      const response = await model.sendRequest(messages, options, cancel.token);
      watchdog.rearm();
      const assembler = new LmResponseAssembler(request.model, shapes, request.onDelta);
      for await (const part of response.stream) {
        watchdog.rearm();
        if (cancel.token.isCancellationRequested) break;
        assembler.add(part);
      }
      if (watchdog.fired) throw new LmTimeoutError();
      if (request.signal?.aborted) throw abortError(request.signal);
      watchdog.stop();
      const promptTokens = await this.countMessages(model, messages, request.tools ?? []);
      const completionTokens = await this.count(model, assembler.textForCounting);
      return assembler.finish({ promptTokens, completionTokens, totalTokens: promptTokens + completionTokens });
    } catch (error) {
      throw watchdog.fired ? new LmTimeoutError() : error;
    } finally {
      watchdog.stop();
      request.signal?.removeEventListener('abort', onAbort);
      cancel.dispose();
    }
  }

  /** The editor model an `llm.models` entry names; a clear not_found error when there is none. */
  private async model(entry: string): Promise<vscode.LanguageModelChat> {
    const known = this.resolved.get(entry);
    if (known) return known;
    const selector = parseEditorModelSelector(entry);
    if (!selector)
      throw new ModelError(
        `"${entry}" in llm.models is not an editor model: ${EDITOR_MODEL_SELECTOR_HELP}`,
        undefined,
        false,
        'bad_request',
      );
    const candidates = await vscode.lm.selectChatModels({ vendor: selector.vendor });
    const [model] = matchEditorModels(entry, candidates);
    if (!model) {
      const all = await vscode.lm.selectChatModels();
      const names = all.map((m) => editorModelSelector(m, all));
      const available =
        names.length > 0
          ? `the editor has: ${names.join(', ')}`
          : 'the editor has no chat model (install or sign in to GitHub Copilot, or another extension that provides one)';
      throw new ModelError(
        `editor model ${entry} is not available: ${available}. Run "Ralph: Select Model" to choose one.`,
        undefined,
        false,
        'not_found',
      );
    }
    this.resolved.set(entry, model);
    return model;
  }

  async maxInputTokens(entry: string): Promise<number | undefined> {
    const model = await this.model(entry);
    return model.maxInputTokens > 0 ? model.maxInputTokens : undefined;
  }

  async countTokens(entry: string, messages: readonly ChatMessage[], tools: readonly ToolSpec[], signal?: AbortSignal): Promise<number> {
    const model = await this.model(entry);
    if (signal?.aborted) throw abortError(signal);
    return this.countMessages(model, toLmMessages(messages, shapes), tools);
  }

  private async countMessages(
    model: vscode.LanguageModelChat,
    messages: readonly vscode.LanguageModelChatMessage[],
    tools: readonly ToolSpec[],
  ): Promise<number> {
    let total = tools.length > 0 ? await this.count(model, JSON.stringify(toLmTools(tools))) : 0;
    for (const message of messages) total += await this.count(model, message);
    return total;
  }

  /** One text or message, counted by the model's tokenizer; remembered, since a conversation is re-counted each step. */
  private async count(model: vscode.LanguageModelChat, what: string | vscode.LanguageModelChatMessage): Promise<number> {
    if (typeof what === 'string' && what.length === 0) return 0;
    const key = `${model.id}\u0000${typeof what === 'string' ? what : messageKey(what)}`;
    const known = this.counted.get(key);
    if (known !== undefined) return known;
    let tokens: number;
    try {
      tokens = await model.countTokens(what);
    } catch {
      // A model that cannot count: the 4-characters-a-token estimate keeps budgets meaningful.
      tokens = Math.ceil((typeof what === 'string' ? what : messageKey(what)).length / 4);
    }
    if (!Number.isFinite(tokens) || tokens < 0) tokens = 0;
    if (this.counted.size > 5000) this.counted.clear();
    this.counted.set(key, tokens);
    return tokens;
  }
}

function messageKey(message: vscode.LanguageModelChatMessage): string {
  return `${message.role}:${JSON.stringify(message.content)}`;
}
