/**
 * zod schemas for every message the host receives from the webview. The webview runs page
 * script the host does not control once loaded, so nothing it sends is trusted: an invalid
 * message is rejected (logged and counted), never acted on.
 */
import { z } from 'zod';
import { PANEL_COMMANDS, WARNING_ACTION_IDS, type WebviewMessage } from './protocol';

const TaskId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/);

const Seq = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const WebviewMessageSchema: z.ZodType<WebviewMessage> = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready'), seq: Seq.optional() }),
  z.strictObject({ type: z.literal('applied'), seq: Seq, digest: z.string().min(1).max(64) }),
  z.strictObject({ type: z.literal('resync'), reason: z.string().max(200).optional() }),
  z.strictObject({ type: z.literal('command'), command: z.enum(PANEL_COMMANDS), taskId: TaskId.optional() }),
  z.strictObject({ type: z.literal('warningAction'), warningId: z.string().min(1).max(200), action: z.enum(WARNING_ACTION_IDS) }),
  // only the reports folder, only markdown, no `..`
  z.strictObject({
    type: z.literal('openFile'),
    path: z.string().regex(/^\.ralph\/reports\/[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*\.md$/),
  }),
  // typed by the person: bounded, and empty only when it approves or refuses a command
  z
    .strictObject({
      type: z.literal('answer'),
      taskId: TaskId,
      text: z.string().max(20_000),
      approved: z.boolean().optional(),
      verdict: z.enum(['part', 'unrelated']).optional(),
    })
    .refine((m) => m.text.trim() !== '' || m.approved !== undefined || m.verdict !== undefined, 'an empty answer'),
  z.strictObject({ type: z.literal('requestChanges'), taskId: TaskId, text: z.string().trim().min(1).max(20_000) }),
]);

export type ParsedWebviewMessage = { ok: true; message: WebviewMessage } | { ok: false; error: string };

export function parseWebviewMessage(raw: unknown): ParsedWebviewMessage {
  const result = WebviewMessageSchema.safeParse(raw);
  if (result.success) return { ok: true, message: result.data };
  return { ok: false, error: issueText(result.error) };
}

/** A rejected message's problems in one line (`path: message; …`). */
export function issueText(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(message)'}: ${i.message}`).join('; ');
}
