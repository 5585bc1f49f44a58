/** A few DOM helpers: elements from data, codicons, buttons. No framework. */

export type Child = Node | string | number | false | null | undefined | Child[];

export interface Attrs {
  [name: string]: string | number | boolean | undefined | ((event: Event) => void);
}

/** `h('div', { class: 'x', 'aria-label': 'y', onclick: fn }, child…)`; false/undefined attributes are left out. */
export function h(tag: string, attrs: Attrs = {}, ...children: Child[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/**
 * A codicon, hidden from screen readers (the text next to it says the same). `name~spin` (VS
 * Code's ThemeIcon syntax) spins: the codicon stylesheet knows it as `codicon-modifier-spin`.
 */
export function icon(name: string, extra = ''): HTMLElement {
  const [base, modifier] = name.split('~');
  const classes = ['codicon', `codicon-${base}`, ...(modifier ? [`codicon-modifier-${modifier}`] : []), ...(extra ? [extra] : [])];
  return h('span', { class: classes.join(' '), 'aria-hidden': 'true' });
}

export interface ButtonOptions {
  icon?: string;
  secondary?: boolean;
  label?: string;
  /** Restores keyboard focus to the same button after a re-render. */
  focusKey?: string;
}

/** A `vscode-button` (keyboard-usable: it is focusable and Enter/Space click it). */
export function button(text: string, onClick: () => void, options: ButtonOptions = {}): HTMLElement {
  const element = h(
    'vscode-button',
    {
      icon: options.icon,
      secondary: options.secondary,
      'aria-label': options.label,
      'data-focus-key': options.focusKey,
    },
    text,
  );
  element.addEventListener('click', onClick);
  return element;
}

/** Replaces `old` with `next`, keeping keyboard focus on the element with the same focus key. */
export function swap(old: Element, next: Element): void {
  const active = document.activeElement;
  const key = active && old.contains(active) ? active.closest('[data-focus-key]')?.getAttribute('data-focus-key') : undefined;
  old.replaceWith(next);
  if (key) (next.querySelector(`[data-focus-key="${CSS.escape(key)}"]`) as HTMLElement | null)?.focus();
}
