import * as vscode from 'vscode';
import { type EventBus, EventEmitter, type RalphEventBody } from '../core/events';

/**
 * Test-only: with `RALPH_TEST_HOOKS=1` in the extension host's environment (the end-to-end
 * suite sets it), `ralphTest.publishEvent` publishes event bodies on the bus, so the browser
 * tests can raise what the core does not emit on demand (a safeguard warning). The command is
 * not contributed, so it never shows in the palette; without the variable it does not exist.
 */
export function registerTestHooks(bus: EventBus, currentTaskId: () => string | undefined): vscode.Disposable {
  const emitter = new EventEmitter(`test-${Date.now()}`, bus);
  return vscode.commands.registerCommand('ralphTest.publishEvent', (bodies: RalphEventBody | RalphEventBody[]) => {
    const list = Array.isArray(bodies) ? bodies : [bodies];
    for (const body of list) {
      const withTask = 'taskId' in body && body.taskId === '$current' ? { ...body, taskId: currentTaskId() } : body;
      emitter.emit(withTask as RalphEventBody);
    }
    return list.length;
  });
}
