import type { InputOf, PanelInputType } from './panelInput';
import type { PanelState } from './panelState';

/** How the panel's state answers one input type; the reducer and its parts (delegations, parallel runs, sync) are tables of these. */
export type Handler<K extends PanelInputType> = (state: PanelState, input: InputOf<K>) => PanelState;
export type Handlers = { [K in PanelInputType]?: Handler<K> };
