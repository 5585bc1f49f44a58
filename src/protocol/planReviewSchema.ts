/** zod schema of every message the plan review's host receives: nothing the webview sends is trusted. */
import { z } from 'zod';
import type { PlanReviewMessage } from './planReviewProtocol';
import { issueText } from './protocolSchema';

const Key = z.string().min(1).max(64);
const Text = z.string().max(100_000);

const Edit = z.strictObject({
  title: z.string().trim().min(1).max(200).optional(),
  prompt: Text.trim().min(1).optional(),
  promise: Text.trim().min(1).optional(),
  check: z.string().max(2000).optional(),
  type: z.string().min(1).max(40).optional(),
  complexity: z.number().int().min(1).max(14).optional(),
  dependsOn: z.array(Key).max(200).optional(),
});

export const PlanReviewMessageSchema: z.ZodType<PlanReviewMessage> = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready') }),
  z.strictObject({ type: z.literal('edit'), key: Key, fields: Edit }),
  z.strictObject({ type: z.literal('drop'), key: Key }),
  z.strictObject({ type: z.literal('move'), key: Key, to: z.number().int().min(0).max(10_000) }),
  z.strictObject({ type: z.literal('merge'), into: Key, other: Key }),
  z.strictObject({ type: z.literal('accept') }),
  z.strictObject({ type: z.literal('discard') }),
  z.strictObject({ type: z.literal('openReport') }),
  z.strictObject({ type: z.literal('openSource'), key: Key }),
]);

export function parsePlanReviewMessage(raw: unknown): { ok: true; message: PlanReviewMessage } | { ok: false; error: string } {
  const result = PlanReviewMessageSchema.safeParse(raw);
  if (result.success) return { ok: true, message: result.data };
  return { ok: false, error: issueText(result.error) };
}
