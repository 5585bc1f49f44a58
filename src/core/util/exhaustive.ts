/**
 * The end of a switch that must decide on every member of a union (the projections of the event
 * union: the panel's events, the live status, the terminal's lines). `value` is `never` once every
 * case is handled, so a new member is a compile error until the switch decides on it; at run time
 * (a value from a newer sender) the switch answers `fallback` rather than breaking.
 */
export function undecided<T>(value: never, fallback: T): T {
  void value;
  return fallback;
}
