/**
 * The progress panel's browser code: connects to the host (ready → snapshot → inputs),
 * renders, and ticks live durations. Plain TypeScript with @vscode-elements, bundled by
 * esbuild into dist/webview/main.js; styled by VS Code's theme variables (main.css).
 */
import './elements';
import type { HostMessage } from '../protocol/protocol';
import { PanelClient, type VsCodeApi } from './client';
import { Renderer } from './render';

declare function acquireVsCodeApi(): VsCodeApi;

const root = document.getElementById('app');
if (!root) throw new Error('the panel page has no #app element');

let scheduled = false;
const client = new PanelClient(acquireVsCodeApi(), () => schedule());
const renderer = new Renderer(root, client);

/** One render per frame however many messages arrive (and a timer in case frames are throttled). */
function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  const run = () => {
    if (!scheduled) return;
    scheduled = false;
    renderer.render();
  };
  requestAnimationFrame(run);
  setTimeout(run, 100);
}

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  const message = event.data;
  if (message && typeof message === 'object' && typeof message.type === 'string') client.handle(message);
});
setInterval(() => renderer.tick(), 1000);

if (client.state) renderer.render();
client.start();
