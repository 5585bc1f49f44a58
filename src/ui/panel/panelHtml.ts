import { randomBytes } from 'node:crypto';
import type * as vscode from 'vscode';

/** The built webview assets (`esbuild.js` writes them); the only folder the webview may load from. */
export const WEBVIEW_DIST = ['dist', 'webview'] as const;

export function newNonce(): string {
  return randomBytes(18)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '');
}

/**
 * The panel's page: a strict Content Security Policy (nothing by default, scripts only with
 * this page's nonce, styles, fonts and images only from the extension's webview folder), the
 * codicon stylesheet under the id @vscode-elements expects, and the bundled script.
 */
/** Which page of the webview folder: its script, its stylesheet, and what it is called. */
export interface WebviewPage {
  script: string;
  style: string;
  title: string;
  label: string;
}

export const PROGRESS_PAGE: WebviewPage = { script: 'main.js', style: 'main.css', title: 'Ralph Progress', label: 'Ralph Loop progress' };

export function panelHtml(
  webview: vscode.Webview,
  asset: (name: string) => vscode.Uri,
  nonce: string,
  page: WebviewPage = PROGRESS_PAGE,
): string {
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
    `style-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  const url = (name: string) => webview.asWebviewUri(asset(name)).toString();
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${csp}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <link rel="stylesheet" href="${url('codicon.css')}" id="vscode-codicon-stylesheet">
  <link rel="stylesheet" href="${url(page.style)}">
  <title>${page.title}</title>
</head>
<body>
  <main id="app" aria-label="${page.label}"><p class="muted">Loading…</p></main>
  <script nonce="${nonce}" src="${url(page.script)}"></script>
</body>
</html>`;
}
