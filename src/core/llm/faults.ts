/**
 * Telling provider faults apart from the HTTP status and the error body, for OpenAI-compatible
 * endpoints. Bodies seen in the wild:
 *   OpenAI / Azure / vLLM  `{ error: { message, type, param, code } }` (`code` a string)
 *   OpenRouter             `{ error: { code: 402, message, metadata: { reasons?, provider_name?, raw? } } }`
 *                          (`code` the HTTP status as a number; also sent inside an SSE chunk mid-stream)
 */

import type { ModelFaultKind } from '../errors';

/** The inner `error` object of a provider's error body, as far as we read it. */
export interface ProviderErrorBody {
  message?: unknown;
  type?: unknown;
  code?: unknown;
  param?: unknown;
  metadata?: unknown;
}

const QUOTA_CODES = new Set([
  'insufficient_quota',
  'billing_hard_limit_reached',
  'billing_not_active',
  'quota_exceeded',
  'insufficient_credits',
  'payment_required',
]);
const AUTH_CODES = new Set([
  'invalid_api_key',
  'invalid_authentication',
  'unauthorized',
  'permission_denied',
  'account_deactivated',
  'invalid_organization',
]);
const CONTEXT_CODES = new Set(['context_length_exceeded', 'string_above_max_length', 'context_window_exceeded']);
const FILTER_CODES = new Set(['content_filter', 'content_policy_violation', 'moderation', 'flagged', 'responsible_ai_policy_violation']);
const NOT_FOUND_CODES = new Set(['model_not_found', 'not_found']);

const CONTEXT_MESSAGE =
  /maximum context length|context length|context window|too many tokens|prompt is too long|reduce the length of the messages/i;
const QUOTA_MESSAGE =
  /insufficient[_ ](quota|credits|balance)|exceeded your current quota|billing|credit balance|out of credits|payment required/i;
const FILTER_MESSAGE = /content (management )?policy|content[_ ]filter|flagged|requires moderation|safety system/i;

/** The fault kind of an HTTP error answer (status undefined: an error event inside a stream). */
export function faultOf(status: number | undefined, body: ProviderErrorBody | undefined): ModelFaultKind {
  const code = codeText(body);
  const message = typeof body?.message === 'string' ? body.message : '';
  const effective = status ?? numericCode(body);
  if (code && QUOTA_CODES.has(code)) return 'quota';
  if (code && CONTEXT_CODES.has(code)) return 'context_length';
  if (code && FILTER_CODES.has(code)) return 'content_filter';
  if (code && AUTH_CODES.has(code)) return 'auth';
  if (effective === 402) return 'quota';
  if (effective === 429) return QUOTA_MESSAGE.test(message) ? 'quota' : 'rate_limit';
  if (effective === 401) return 'auth';
  // OpenRouter answers a moderation refusal with 403 and `metadata.reasons`
  if (effective === 403) return hasReasons(body) || FILTER_MESSAGE.test(message) ? 'content_filter' : 'auth';
  if (effective === 408 || effective === 409 || (effective !== undefined && effective >= 500)) return 'outage';
  if (effective === 404) return code && NOT_FOUND_CODES.has(code) ? 'not_found' : /model/i.test(message) ? 'not_found' : 'bad_request';
  if (effective === 400 || effective === 413 || effective === 422) {
    if (CONTEXT_MESSAGE.test(message)) return 'context_length';
    if (FILTER_MESSAGE.test(message)) return 'content_filter';
    if (effective === 413) return 'context_length';
    return 'bad_request';
  }
  if (effective !== undefined && effective >= 400) return 'bad_request';
  // an error event mid-stream without a status: the provider broke off
  return 'outage';
}

/** Faults another attempt at the same endpoint may cure. */
export function retryableFault(fault: ModelFaultKind): boolean {
  return fault === 'rate_limit' || fault === 'outage';
}

/** A short label of each fault for messages: "quota exhausted", "authentication failed"… */
export function faultLabel(fault: ModelFaultKind): string {
  switch (fault) {
    case 'rate_limit':
      return 'rate limited';
    case 'quota':
      return 'quota or credits exhausted';
    case 'auth':
      return 'authentication failed';
    case 'context_length':
      return 'context length exceeded';
    case 'outage':
      return 'provider outage';
    case 'content_filter':
      return 'content filtered';
    case 'not_found':
      return 'model not found';
    case 'consent':
      return 'consent refused';
    case 'bad_request':
      return 'request rejected';
    default:
      return 'model call failed';
  }
}

/** Faults after which another model or endpoint of `llm.fallback` is tried. */
export function fallbackFault(fault: ModelFaultKind): boolean {
  return fault === 'quota' || fault === 'outage' || fault === 'rate_limit';
}

function codeText(body: ProviderErrorBody | undefined): string | undefined {
  for (const value of [body?.code, body?.type]) {
    if (typeof value === 'string' && value.trim() !== '' && !/^\d+$/.test(value)) return value.trim().toLowerCase();
  }
  return undefined;
}

function numericCode(body: ProviderErrorBody | undefined): number | undefined {
  const code = body?.code;
  if (typeof code === 'number' && Number.isInteger(code)) return code;
  if (typeof code === 'string' && /^\d{3}$/.test(code)) return Number(code);
  return undefined;
}

function hasReasons(body: ProviderErrorBody | undefined): boolean {
  const reasons = (body?.metadata as { reasons?: unknown } | undefined)?.reasons;
  return Array.isArray(reasons) && reasons.length > 0;
}
