/**
 * Naming the editor's models (VS Code's Language Model API) in `llm.models`: an entry is
 * `<vendor>/<family>` or `<vendor>/<id>`, e.g. `copilot/gpt-4.1`. Pure, so the config schema,
 * the CLI and the extension share one definition.
 */

/** What the editor says about one of its chat models (a structural view of LanguageModelChat). */
export interface EditorModelInfo {
  id: string;
  name: string;
  vendor: string;
  family: string;
  version: string;
  maxInputTokens: number;
}

export interface EditorModelSelector {
  vendor: string;
  /** A family (matched first) or a model id. */
  model: string;
}

/** `vendor/family` or `vendor/id`: a vendor without spaces or slashes, then a non-empty name without spaces. */
export const EDITOR_MODEL_SELECTOR = /^([A-Za-z0-9][A-Za-z0-9._-]*)\/(\S+)$/;

export const EDITOR_MODEL_SELECTOR_HELP =
  'an editor model is named "<vendor>/<family>" or "<vendor>/<id>", e.g. "copilot/gpt-4.1" (run "Ralph: Select Model" to pick one)';

export function parseEditorModelSelector(entry: string): EditorModelSelector | undefined {
  const match = EDITOR_MODEL_SELECTOR.exec(entry.trim());
  return match ? { vendor: match[1], model: match[2] } : undefined;
}

/**
 * The models a selector names, best first: the same vendor (case-insensitive), then an exact
 * id, else the family. Several models of one family (versions) keep the editor's order.
 */
export function matchEditorModels<T extends EditorModelInfo>(entry: string, models: readonly T[]): T[] {
  const selector = parseEditorModelSelector(entry);
  if (!selector) return [];
  const vendor = selector.vendor.toLowerCase();
  const ofVendor = models.filter((m) => m.vendor.toLowerCase() === vendor);
  const byId = ofVendor.filter((m) => m.id === selector.model);
  return byId.length > 0 ? byId : ofVendor.filter((m) => m.family === selector.model);
}

/** The entry that names `model` among `all`: `vendor/family` when that is unambiguous, else `vendor/id`. */
export function editorModelSelector(model: EditorModelInfo, all: readonly EditorModelInfo[]): string {
  const byFamily = `${model.vendor}/${model.family}`;
  const first = matchEditorModels(byFamily, all)[0];
  return model.family && !/\s/.test(model.family) && first?.id === model.id ? byFamily : `${model.vendor}/${model.id}`;
}
