/** Dependency cycles among items that name each other by key (a proposed plan, an issue import). */

export interface DependencyNode {
  key: string;
  dependsOn: readonly string[];
}

/**
 * The first dependency cycle found, as the keys along it with the first repeated at the end
 * (`a → b → a`); undefined when there is none. Keys not among `nodes` are ignored here.
 */
export function findCycle(nodes: readonly DependencyNode[]): string[] | undefined {
  const byKey = new Map(nodes.map((n) => [n.key, n]));
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (key: string): string[] | undefined => {
    if (done.has(key)) return undefined;
    const at = path.indexOf(key);
    if (at >= 0) return [...path.slice(at), key];
    const node = byKey.get(key);
    if (!node) return undefined;
    path.push(key);
    for (const dependency of node.dependsOn) {
      const cycle = visit(dependency);
      if (cycle) return cycle;
    }
    path.pop();
    done.add(key);
    return undefined;
  };
  for (const node of nodes) {
    const cycle = visit(node.key);
    if (cycle) return cycle;
  }
  return undefined;
}

/** The nodes with every dependency before its dependents, otherwise in the given order (cycles must be ruled out first). */
export function dependencyOrder<T extends DependencyNode>(nodes: readonly T[]): T[] {
  const out: T[] = [];
  const placed = new Set<string>();
  const byKey = new Map(nodes.map((n) => [n.key, n]));
  const place = (node: T): void => {
    if (placed.has(node.key)) return;
    placed.add(node.key);
    for (const dependency of node.dependsOn) {
      const before = byKey.get(dependency);
      if (before) place(before);
    }
    out.push(node);
  };
  nodes.forEach(place);
  return out;
}
