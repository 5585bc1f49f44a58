/**
 * `llm.fallback`: other models or endpoints used while the primary is failing (quota exhausted,
 * an outage or a rate limit that outlasted the retries), and a return to the primary after a
 * cool-down, checked by a small probe request first. A decorator of any ModelClient, so every
 * provider adapter gets it. Every switch and return is reported; it never stays on a fallback
 * silently.
 */

import { ModelError, type ModelFaultKind, StopRequestedError } from '../errors';
import type { Clock } from '../ports';
import { fallbackFault, faultLabel } from './faults';
import type { ChatRequest, ChatResponse, ModelClient, TokenCounter } from './types';

/** One entry of `llm.fallback`, with the client that reaches it. */
export interface FallbackTarget {
  /** The model name sent to its endpoint. */
  model: string;
  client: ModelClient;
  /** How it is named in notices: the model, plus the endpoint when it is another one. */
  label: string;
}

/** A switch to a fallback, a return to the primary, or a probe that found the primary still failing. */
export interface FallbackNotice {
  kind: 'switch' | 'return' | 'probe-failed';
  /** The model in use before (the primary on the first switch). */
  from: string;
  /** The model in use after. */
  to: string;
  /** The fault that caused the switch (the probe's, for probe-failed); absent on a return. */
  fault?: ModelFaultKind;
  /** The failure's message (switch / probe-failed) or what the probe found (return). */
  reason: string;
  /** Seconds until the primary is probed again (switch / probe-failed). */
  cooldownSec?: number;
}

export interface FallbackOptions {
  /** The client of the primary endpoint (the model comes with each request). */
  primary: ModelClient;
  /** Reaches the primary endpoint without retries: the probe after a cool-down. */
  probe: ModelClient;
  fallbacks: readonly FallbackTarget[];
  /** How long the primary is left alone after it failed before a probe. */
  cooldownMs: number;
  clock: Clock;
  onNotice(notice: FallbackNotice): void;
}

/** The probe: as small as a request can be. */
const PROBE_MESSAGE = 'Health check: reply with the single word OK.';
const PROBE_MAX_TOKENS = 16;

interface Outage {
  /** When the primary failed (or last failed its probe). */
  since: number;
  /** Index into the fallbacks of the one in use. */
  active: number;
}

export class FallbackModelClient implements ModelClient {
  /** Primary models that are failing, by model name (each ladder model has its own state). */
  private readonly failing = new Map<string, Outage>();

  constructor(private readonly options: FallbackOptions) {}

  /** The primary's own token counting (the editor's models have one) for compaction. */
  get tokens(): TokenCounter | undefined {
    return this.options.primary.tokens;
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    const primary = request.model;
    const outage = this.failing.get(primary);
    if (outage && !request.windDown && this.cooledDown(outage) && (await this.probe(request, outage))) {
      this.failing.delete(primary);
    }
    const current = this.failing.get(primary);
    if (!current) {
      try {
        return await this.options.primary.chat(request);
      } catch (error) {
        if (!this.fallsBack(error, request)) throw error;
        return this.viaFallbacks(request, error as ModelError, 0, primary);
      }
    }
    return this.viaFallbacks(request, undefined, current.active, this.options.fallbacks[current.active]?.label ?? primary);
  }

  /**
   * Tries the fallbacks from `start`; `cause` is the primary's failure when this call found it.
   * The first that answers is the one in use until the primary's cool-down ends.
   */
  private async viaFallbacks(
    request: ChatRequest,
    primaryFailure: ModelError | undefined,
    start: number,
    inUse: string,
  ): Promise<ChatResponse> {
    let cause = primaryFailure;
    const { fallbacks, clock } = this.options;
    const primary = request.model;
    const failures: string[] = cause ? [`${primary}: ${cause.message}`] : [];
    let from = inUse;
    let lastFault: ModelFaultKind = cause?.fault ?? 'outage';
    let reason = cause?.message ?? '';
    for (let i = start; i < fallbacks.length; i++) {
      const target = fallbacks[i];
      // the ladder's model may itself be listed as a fallback: never "fall back" to what just failed
      if (target.client === this.options.primary && target.model === primary) continue;
      if (from !== target.label) {
        // the primary's cool-down starts when it failed, not when a later fallback failed too
        const since = this.failing.get(primary)?.since ?? clock.now();
        this.failing.set(primary, { since, active: i });
        this.options.onNotice({
          kind: 'switch',
          from,
          to: target.label,
          fault: lastFault,
          reason,
          cooldownSec: this.cooldownLeftSec(since),
        });
      }
      try {
        const response = await target.client.chat({ ...request, model: target.model });
        return { ...response, servedBy: target.model };
      } catch (error) {
        if (!this.fallsBack(error, request)) throw error;
        const failed = error as ModelError;
        failures.push(`${target.label}: ${failed.message}`);
        lastFault = failed.fault;
        reason = failed.message;
        from = target.label;
      }
    }
    // every fallback failed too: back to the primary (its cool-down is moot now)
    this.failing.delete(primary);
    if (!cause) {
      // the primary was not asked in this call: it may be back, ask it before giving up
      this.options.onNotice({
        kind: 'return',
        from,
        to: primary,
        reason: `every llm.fallback entry failed (${faultLabel(lastFault)}); trying the primary again`,
      });
      try {
        return await this.options.primary.chat(request);
      } catch (error) {
        if (!this.fallsBack(error, request)) throw error;
        cause = error as ModelError;
        failures.unshift(`${primary}: ${cause.message}`);
      }
    }
    const fault = cause.fault;
    throw new ModelError(
      `${primary} and every llm.fallback entry failed (${faultLabel(fault)}): ${failures.join(' | ')}`,
      cause.status,
      false,
      fault,
    );
  }

  /** Asks the primary whether it is back. True when it answered; the outage is renewed otherwise. */
  private async probe(request: ChatRequest, outage: Outage): Promise<boolean> {
    const primary = request.model;
    const using = this.options.fallbacks[outage.active]?.label ?? primary;
    try {
      await this.options.probe.chat({
        model: primary,
        messages: [{ role: 'user', content: PROBE_MESSAGE }],
        maxTokens: PROBE_MAX_TOKENS,
        signal: request.signal,
      });
    } catch (error) {
      if (request.signal?.aborted || error instanceof StopRequestedError) throw error;
      const fault = error instanceof ModelError ? error.fault : 'unknown';
      const since = this.options.clock.now();
      this.failing.set(primary, { ...outage, since });
      this.options.onNotice({
        kind: 'probe-failed',
        from: using,
        to: using,
        fault,
        reason: error instanceof Error ? error.message : String(error),
        cooldownSec: this.cooldownLeftSec(since),
      });
      return false;
    }
    this.options.onNotice({
      kind: 'return',
      from: using,
      to: primary,
      reason: `the probe to ${primary} succeeded after the ${Math.round(this.options.cooldownMs / 1000)} s cool-down`,
    });
    return true;
  }

  private fallsBack(error: unknown, request: ChatRequest): boolean {
    if (request.signal?.aborted) return false;
    return error instanceof ModelError && fallbackFault(error.fault) && this.options.fallbacks.length > 0;
  }

  private cooledDown(outage: Outage): boolean {
    return this.options.clock.now() - outage.since >= this.options.cooldownMs;
  }

  private cooldownLeftSec(since: number): number {
    return Math.max(0, Math.round((since + this.options.cooldownMs - this.options.clock.now()) / 1000));
  }
}
