import type { ScriptedToolCall, Step } from '../../fixtures/scriptedServer';

/** A product document as people write them: sections, a code sample that looks like a heading, a table. */
export const PRD = `# Shop PRD

Customers can sign in and keep a cart across visits.

## Sign-in

Users sign in with an email and a password.

- The sign-in form rejects a wrong password with "Invalid email or password".
- Five failed attempts lock the account for 15 minutes.

\`\`\`sh
# not a heading: a comment in a shell sample
curl -X POST /api/login
\`\`\`

## Cart

The cart survives a reload and a sign-out.

| Action | Result |
| --- | --- |
| add | item count + 1 |

## Out of scope

Payments.
`;

/** One planned task as a model writes it (the shape `propose_tasks` asks for). */
export function proposed(key: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    key,
    title: `Task ${key}`,
    prompt: `Implement ${key}.`,
    promise: `${key} works and its tests pass`,
    type: 'feature',
    complexity: 3,
    dependsOn: [],
    section: 'Sign-in',
    ...extra,
  };
}

export function planCall(tasks: Record<string, unknown>[], notes?: string): ScriptedToolCall {
  return { name: 'propose_tasks', arguments: { tasks, ...(notes ? { notes } : {}) } };
}

/** The reply of a model that proposes `tasks` with a tool call. */
export function planReply(tasks: Record<string, unknown>[], notes?: string): Step {
  return { toolCalls: [planCall(tasks, notes)], usage: { prompt_tokens: 1200, completion_tokens: 300 } };
}

/** The sign-in/cart plan the tests expect, with a split and a check. */
export const SHOP_PLAN = [
  proposed('login-form', { title: 'Sign-in form', prompt: 'Add the sign-in form at /login.', promise: 'A wrong password shows "Invalid email or password".', check: 'npm test -- --grep login', complexity: 4 }),
  proposed('lockout', { title: 'Account lockout', section: 'Sign-in', dependsOn: ['login-form'], split: { from: 'Sign-in', part: 2, of: 2, reason: 'lockout needs its own store and tests' } }),
  proposed('cart', { title: 'Persistent cart', section: 'Cart', type: 'feature', complexity: 5, promise: 'The cart survives a reload and a sign-out.' }),
];
