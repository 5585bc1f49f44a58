/**
 * *Ralph: Select Agent*: who works on the tasks — Ralph's built-in agent (over the model of
 * Select Model), or an agent CLI the person already uses (Claude Code, Codex), each shown with
 * where it was found or how to install it. The choice is written to `.ralph/config.json`
 * (`agent.kind`, and `agent.model` when one is typed).
 */
import * as vscode from 'vscode';
import { AGENT_KINDS, type AgentKind } from '../core/agentKinds';
import { adapterOf, resolveAgentCommand } from '../core/agentCli/port';
import { editConfig } from '../core/config/modelChoice';
import { loadConfigOrOffer } from './selectModel';
import type { ConfigService } from '../core/config/service';
import type { RalphConfig } from '../core/config/schema';
import { errorMessage } from '../core/errors';

export interface SelectAgentServices {
  config: ConfigService;
}

/** What Select Agent writes: the agent, and the model it is told to use (undefined: its own default). */
export interface AgentChoice {
  kind: AgentKind;
  model?: string;
}

interface AgentItem extends vscode.QuickPickItem {
  agent: AgentKind;
}

/** The name people know an agent by. */
export function agentLabel(kind: AgentKind): string {
  return kind === 'builtin' ? 'Built-in agent' : adapterOf(kind).label;
}

/** The status bar's words for the config's agent CLI: `Claude Code: sonnet` (or its default model). */
export function agentStatusLabel(config: RalphConfig): string {
  return `${agentLabel(config.agent.kind)}: ${config.agent.model ?? 'its default model'}`;
}

/** The items of the picker: each agent, where its CLI was found or the command that installs it. */
export function agentItems(config: RalphConfig, env: NodeJS.ProcessEnv = process.env): AgentItem[] {
  return AGENT_KINDS.map((kind) => {
    const current = config.agent.kind === kind ? '$(check) ' : '';
    if (kind === 'builtin')
      return {
        agent: kind,
        label: `${current}Built-in agent`,
        description: `over ${config.llm.models[0] ?? 'the model of Select Model'}`,
        detail: "Ralph's own agent: its tools, sub-agents (scout, devo, caio) and the models of llm.models",
      };
    const adapter = adapterOf(kind);
    let found: string;
    try {
      found = `found: ${resolveAgentCommand(kind, { ...config.agent, ...(config.agent.kind === kind ? {} : { command: undefined }) }, env)}`;
    } catch {
      found = `not installed: ${adapter.install}`;
    }
    return {
      agent: kind,
      label: `${current}${adapter.label}`,
      description: adapter.defaultCommand,
      detail: `${found} · one fresh headless session per iteration, checked by Ralph's gates`,
    };
  });
}

/** Shows the picker (or takes `preset`: scripts, tests); writes and returns the choice, undefined when dismissed. */
export async function selectAgent(s: SelectAgentServices, preset?: unknown): Promise<AgentChoice | undefined> {
  const config = await loadConfigOrOffer(s.config);
  if (!config) return undefined;
  const choice = presetChoice(preset) ?? (await pick(config));
  if (!choice) return undefined;
  try {
    await editConfig(s.config, `choosing the agent ${choice.kind}`, () => [
      [['agent', 'kind'], choice.kind],
      ...(choice.kind !== 'builtin' ? [[['agent', 'model'], choice.model] as [string[], unknown]] : []),
    ]);
    const model = choice.model ? ` with ${choice.model}` : '';
    void vscode.window.showInformationMessage(
      `Ralph: the tasks are now worked on by ${agentLabel(choice.kind)}${model} (agent.kind in .ralph/config.json).`,
    );
    return choice;
  } catch (error) {
    void vscode.window.showErrorMessage(`Ralph: ${errorMessage(error)}`);
    return undefined;
  }
}

function presetChoice(preset: unknown): AgentChoice | undefined {
  if (typeof preset !== 'object' || preset === null) return undefined;
  const { kind, model } = preset as Record<string, unknown>;
  if (!(AGENT_KINDS as readonly unknown[]).includes(kind)) return undefined;
  return { kind: kind as AgentKind, ...(typeof model === 'string' && model.trim() ? { model: model.trim() } : {}) };
}

async function pick(config: RalphConfig): Promise<AgentChoice | undefined> {
  const item = await vscode.window.showQuickPick(agentItems(config), {
    title: 'Ralph: Select Agent',
    placeHolder: 'Who works on the tasks (written to agent.kind in .ralph/config.json)',
    matchOnDetail: true,
  });
  if (!item) return undefined;
  if (item.agent === 'builtin') return { kind: 'builtin' };
  const model = await vscode.window.showInputBox({
    title: `Ralph: the model ${agentLabel(item.agent)} uses`,
    prompt: `A model name ${agentLabel(item.agent)} accepts, or empty for its own default`,
    value: config.agent.kind === item.agent ? (config.agent.model ?? '') : '',
  });
  if (model === undefined) return undefined;
  return { kind: item.agent, ...(model.trim() ? { model: model.trim() } : {}) };
}
