import { type GitCall, handleGitCall, type OnText } from './gitCalls';

/**
 * The git helper process (started by gitHost.ts with an IPC channel, bundled as
 * dist/gitHostMain.js): answers each call by its id, and ends with its parent. A `stream` call's
 * output goes as it comes, in messages `{ id, chunk }` before the reply; git waits while one is
 * being written (nothing piles up here).
 */
process.on('message', (message: GitCall & { id: number }) => {
  const onText: OnText | undefined =
    message.op === 'stream'
      ? (chunk) =>
          new Promise<void>((resolve) => {
            if (!process.send) return resolve();
            process.send({ id: message.id, chunk }, undefined, undefined, () => resolve());
          })
      : undefined;
  void handleGitCall(message, onText).then((reply) => process.send?.({ id: message.id, ...reply }));
});
process.on('disconnect', () => process.exit(0));
