/**
 * *Ralph: Select Model*: a quick pick of the editor's chat models (VS Code Language Model API:
 * name, vendor, family, context size) and of the configured endpoint's models (GET /models when
 * it answers); the choice is written to `.ralph/config.json` (`llm.provider`, `llm.models`).
 */
import * as vscode from 'vscode';
import type { ConfigService } from '../core/config/service';
import { type ModelChoice, writeModelChoice } from '../core/config/modelChoice';
import type { RalphConfig } from '../core/config/schema';
import { errorMessage } from '../core/errors';
import { editorModelSelector, type EditorModelInfo } from '../core/config/editorModels';
import { listEndpointModels } from '../core/llm/endpointModels';
import { resolveApiKey } from '../core/llm/factory';
import type { SecretSource } from '../core/ports';
import { listEditorModels } from '../adapters/lmModelClient';

export interface SelectModelServices {
  /** The workspace's one ConfigService (the façade's, core/ralph.ts). */
  config: ConfigService;
  secrets: SecretSource;
}

interface ModelItem extends vscode.QuickPickItem {
  choice?: ModelChoice;
}

/** What the endpoint offers, or why it could not be asked (shown in the list, never an error dialog). */
async function endpointModels(llm: RalphConfig['llm'], secrets: SecretSource): Promise<{ ids: string[]; note?: string }> {
  let apiKey: string;
  try {
    apiKey = await resolveApiKey(llm, secrets);
  } catch {
    return { ids: [], note: `no API key (${llm.apiKeyEnv}) and no llm.baseUrl: endpoint models not listed` };
  }
  try {
    return { ids: await listEndpointModels({ baseUrl: llm.baseUrl, apiKey }) };
  } catch (error) {
    return { ids: [], note: `${llm.baseUrl ?? 'api.openai.com'} not reachable: ${errorMessage(error)}` };
  }
}

function contextSize(tokens: number): string {
  return tokens >= 1000 ? `${Math.round(tokens / 1000)}k` : String(tokens);
}

export function editorItems(models: readonly EditorModelInfo[], current: RalphConfig['llm']): ModelItem[] {
  return models.map((model) => {
    const entry = editorModelSelector(model, models);
    const isCurrent = current.provider === 'vscode' && current.models[0] === entry;
    return {
      label: `${isCurrent ? '$(check) ' : ''}${model.name}`,
      description: `${model.vendor} · ${model.family}${model.version && model.version !== model.family ? ` · ${model.version}` : ''}`,
      detail: `${contextSize(model.maxInputTokens)} input tokens · no API key · saved as "${entry}"`,
      choice: { provider: 'vscode', model: entry },
    };
  });
}

/** Shows the picker; writes and returns the choice, or undefined when dismissed. `preset` skips the picker (scripts, tests). */
export async function selectModel(s: SelectModelServices, preset?: unknown): Promise<ModelChoice | undefined> {
  const config = await loadConfigOrOffer(s.config);
  if (!config) return undefined;
  let choice = presetChoice(preset);
  if (!choice) {
    const picked = await pick(s, config);
    if (!picked) return undefined;
    choice = picked;
  }
  try {
    const written = await writeModelChoice(s.config, choice);
    const kind = choice.provider === 'vscode' ? 'editor model, no API key needed' : (written.llm.baseUrl ?? 'OpenAI');
    void vscode.window.showInformationMessage(
      `Ralph: the loop now uses ${choice.model} (${kind}); llm.models = ${JSON.stringify(written.llm.models)} in .ralph/config.json.`,
    );
    return choice;
  } catch (error) {
    void vscode.window.showErrorMessage(`Ralph: ${errorMessage(error)}`);
    return undefined;
  }
}

/** The workspace's config, or undefined after an error that offers *Open Config* (a broken file is the person's to fix). */
export async function loadConfigOrOffer(config: ConfigService): Promise<RalphConfig | undefined> {
  try {
    return await config.load();
  } catch (error) {
    const open = await vscode.window.showErrorMessage(`Ralph: ${errorMessage(error)}`, 'Open Config');
    if (open) await vscode.commands.executeCommand('ralph.openConfig');
    return undefined;
  }
}

function presetChoice(preset: unknown): ModelChoice | undefined {
  if (typeof preset !== 'object' || preset === null) return undefined;
  const { provider, model } = preset as Record<string, unknown>;
  if ((provider === 'vscode' || provider === 'openai') && typeof model === 'string' && model.trim())
    return { provider, model: model.trim() };
  return undefined;
}

async function pick(s: SelectModelServices, config: RalphConfig): Promise<ModelChoice | undefined> {
  const quickPick = vscode.window.createQuickPick<ModelItem>();
  quickPick.title = 'Ralph: Select Model';
  quickPick.placeholder = 'The model the loop starts with (written to llm.models in .ralph/config.json)';
  quickPick.matchOnDescription = true;
  quickPick.matchOnDetail = true;
  quickPick.busy = true;
  quickPick.show();
  const [editor, endpoint] = await Promise.all([
    listEditorModels().catch(() => [] as EditorModelInfo[]),
    endpointModels(config.llm, s.secrets),
  ]);
  const items: ModelItem[] = [{ label: 'Editor models (VS Code Language Model API)', kind: vscode.QuickPickItemKind.Separator }];
  if (editor.length > 0) items.push(...editorItems(editor, config.llm));
  else
    items.push({
      label: '$(info) This editor has no chat model',
      detail: 'Install or sign in to GitHub Copilot (or another extension that provides a language model)',
      alwaysShow: true,
    });
  items.push({ label: `Endpoint: ${config.llm.baseUrl ?? 'api.openai.com'}`, kind: vscode.QuickPickItemKind.Separator });
  for (const id of endpoint.ids) {
    const isCurrent = config.llm.provider === 'openai' && config.llm.models[0] === id;
    items.push({
      label: `${isCurrent ? '$(check) ' : ''}${id}`,
      description: 'OpenAI-compatible endpoint',
      choice: { provider: 'openai', model: id },
    });
  }
  if (endpoint.note) items.push({ label: '$(warning) Endpoint models not listed', detail: endpoint.note, alwaysShow: true });
  quickPick.items = items;
  quickPick.busy = false;
  return new Promise<ModelChoice | undefined>((resolve) => {
    quickPick.onDidAccept(() => {
      const choice = quickPick.selectedItems[0]?.choice;
      if (!choice) return; // an info row: keep the picker open
      resolve(choice);
      quickPick.hide();
    });
    quickPick.onDidHide(() => {
      resolve(undefined);
      quickPick.dispose();
    });
  });
}
