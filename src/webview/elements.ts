// Only the @vscode-elements components the panel uses (each registers its custom element).
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
