/**
 * Reading the extension's views from inside the extension host: the task tree's nodes and
 * items (as VS Code gets them from the provider), and the progress panel's webview in step with
 * its model (the webview reports the sequence number and digest it applied).
 */
import * as vscode from 'vscode';
import type { RalphExtensionApi } from '../../src/extension';
import { stateDigest } from '../../src/protocol/panelState';
import type { TaskNode, TaskTreeNode } from '../../src/ui/taskTree';
import { waitFor } from '../helpers/waitFor';

export function taskNode(api: RalphExtensionApi, id: string): TaskNode | undefined {
  const tree = api.tree!;
  return (tree.getChildren() as TaskTreeNode[]).flatMap((group) => tree.getChildren(group) as TaskNode[]).find((n) => n.task.id === id);
}

/** The tree item VS Code shows for the task, or undefined while the tree has no such task. */
export function treeItem(api: RalphExtensionApi, id: string): vscode.TreeItem | undefined {
  const node = taskNode(api, id);
  return node ? api.tree!.getTreeItem(node) : undefined;
}

/** The tooltip's markdown, with the non-breaking spaces `appendText` writes read as spaces. */
export function tooltipText(api: RalphExtensionApi, id: string): string {
  const tooltip = treeItem(api, id)?.tooltip;
  return (tooltip instanceof vscode.MarkdownString ? tooltip.value : String(tooltip ?? '')).replace(/&nbsp;/g, ' ');
}

/** Waits until the webview applied everything the panel's model holds. */
export async function panelInSync(api: RalphExtensionApi, what: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    what,
    () => {
      const applied = api.panel!.lastApplied;
      return applied !== undefined && applied.seq === api.panelModel!.seq && applied.digest === stateDigest(api.panelModel!.state);
    },
    timeoutMs,
  );
}
