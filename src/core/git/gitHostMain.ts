import { type GitCall, handleGitCall } from './gitCalls';

/**
 * The git helper process (started by gitHost.ts with an IPC channel, bundled as
 * dist/gitHostMain.js): answers each call by its id, and ends with its parent.
 */
process.on('message', (message: GitCall & { id: number }) => {
  void handleGitCall(message).then((reply) => process.send?.({ id: message.id, ...reply }));
});
process.on('disconnect', () => process.exit(0));
