import * as vscode from 'vscode';
import { sandboxAdvice } from '../core/commands/sandboxAdvice';
import { editConfig } from '../core/config/modelChoice';
import type { ConfigService } from '../core/config/service';
import { errorMessage } from '../core/errors';
import type { EventBus, EventOf } from '../core/events';
import type { Prompts } from './dialogs';
import { DisposableBase } from './disposableBase';

/** The machine-wide memory that the person was told once. */
export const SANDBOX_NOTICE_SHOWN = 'ralph.noSandboxNoticeShown';

const INSTALL = 'Install in Terminal';
const ACCEPT = 'Accept the Risk';

export interface SandboxNoticeServices {
  bus: EventBus;
  /** The extension's global state: the notice is shown on the first run without a sandbox, once. */
  memory: vscode.Memento;
  config: ConfigService;
  /** Where the notification is shown (VS Code's, or a test's answers). */
  prompts: Prompts;
}

/**
 * The first run without a sandbox (warning `no-sandbox`) tells the person, once, in words they act
 * on: the agent's commands run with their rights, the one command that installs bubblewrap here
 * (typed into a terminal for them to run), or accepting the risk (`commands.sandbox: "off"` in
 * this workspace's config, which also silences the run's warning).
 */
export class SandboxNotice extends DisposableBase {
  /** The notices under way: shown, then the person's choice carried out. */
  private readonly showing = new Set<Promise<void>>();

  constructor(private readonly s: SandboxNoticeServices) {
    super();
    this.register(
      s.bus.subscribe((event) => {
        if (event.type !== 'warning' || event.code !== 'no-sandbox') return;
        const shown = this.show(event).catch(() => undefined);
        this.showing.add(shown);
        void shown.then(() => this.showing.delete(shown));
      }),
    );
  }

  /** Resolves once every notice begun has been answered and its choice carried out (for tests: no fixed wait). */
  async settled(): Promise<void> {
    while (this.showing.size > 0) await Promise.all([...this.showing]);
  }

  private async show(event: EventOf<'warning'>): Promise<void> {
    if (this.s.memory.get<boolean>(SANDBOX_NOTICE_SHOWN)) return;
    // remembered at once (a memento's value is set before its storage is written): the notice is
    // shown without waiting for the storage round trip, and a second warning meanwhile shows none
    void Promise.resolve(this.s.memory.update(SANDBOX_NOTICE_SHOWN, true)).catch(() => undefined);
    const advice = sandboxAdvice({ available: false, reason: event.message });
    const text =
      "Ralph: the agent's commands run without a sandbox on this machine — what the command rules allow can write outside the workspace and reach the network. " +
      (advice.install ? `Install bubblewrap to confine them: ${advice.install}` : `To confine them, ${advice.fix}.`);
    const choice = await this.s.prompts.warn(text, [...(advice.install ? [INSTALL] : []), ACCEPT]);
    if (choice === INSTALL && advice.install) {
      const terminal = vscode.window.createTerminal('Install bubblewrap');
      terminal.show();
      terminal.sendText(advice.install, false); // typed, not run: the person presses Enter (and gives sudo its password)
    } else if (choice === ACCEPT) {
      await this.accept();
    }
  }

  /** Forgets that the person was told: the next run without a sandbox tells them again (for tests). */
  forget(): Thenable<void> {
    return this.s.memory.update(SANDBOX_NOTICE_SHOWN, undefined);
  }

  private async accept(): Promise<void> {
    try {
      await editConfig(this.s.config, 'commands.sandbox "off"', () => [[['commands', 'sandbox'], 'off']]);
      void vscode.window.showInformationMessage(
        'Ralph: commands.sandbox is "off" in .ralph/config.json: commands run unconfined without asking about it again.',
      );
    } catch (error) {
      void vscode.window.showErrorMessage(`Ralph: ${errorMessage(error)}`);
    }
  }
}
