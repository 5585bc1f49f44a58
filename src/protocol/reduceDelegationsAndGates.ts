/** Reducers for delegation envelopes and gate results. */
import type { DelegationOutcome } from './panelEvents';
import type { Handlers } from './reducerTypes';
import { type DelegationView, type EvidenceLine, type GateView, LIMITS, type TaskView, type TestCounts } from './panelState';
import { checkedAhead, mergeCheckTarget } from './reduceParallel';
import { clip, updateIteration, updateTask } from './taskUpdates';

function evidenceLines(result: DelegationOutcome): EvidenceLine[] {
  const lines: EvidenceLine[] = result.toolEvidence.map((e) => ({
    tag: e.pendingApproval ? 'PENDING' : e.success ? 'OK' : 'ERROR',
    tool: e.tool,
    summary: clip(e.summary, 300),
    ...(e.externalId ? { externalId: e.externalId } : {}),
  }));
  for (const missing of result.missingEvidence ?? [])
    lines.push({ tag: 'MISSING', tool: missing.tool, summary: clip(missing.summary, 300) });
  return lines.slice(-LIMITS.evidence);
}

function upsertDelegation(task: TaskView, id: string, update: (d: DelegationView | undefined) => DelegationView): TaskView {
  const index = task.delegations.findIndex((d) => d.id === id);
  const next = update(index >= 0 ? task.delegations[index] : undefined);
  let delegations: DelegationView[];
  if (index >= 0) {
    delegations = task.delegations.slice();
    delegations[index] = next;
  } else {
    delegations = [...task.delegations, next].slice(-LIMITS.delegations);
  }
  return { ...task, delegations };
}

function testCounts(tests: { passed: number; failed: number; total: number; failing: string[] }): TestCounts {
  return {
    passed: tests.passed,
    failed: tests.failed,
    total: tests.total,
    failing: tests.failing.slice(0, LIMITS.failingTests).map((f) => clip(f, 300)),
  };
}

function upsertGate(gates: GateView[], name: string, update: (g: GateView | undefined) => GateView): GateView[] {
  const index = gates.findIndex((g) => g.name === name);
  const next = update(index >= 0 ? gates[index] : undefined);
  if (index < 0) return [...gates, next];
  const copy = gates.slice();
  copy[index] = next;
  return copy;
}

function gateCounts(gates: GateView[]): { passed: number; failed: number; total: number } {
  return {
    passed: gates.filter((g) => g.passed === true).length,
    failed: gates.filter((g) => g.passed === false).length,
    total: gates.length,
  };
}

export const delegationHandlers = {
  'delegation.started': (state, e) =>
    updateTask(state, e.taskId, (t) => {
      const id = `${e.runId}:${e.delegationId}`;
      const started = upsertDelegation(t, id, () => ({
        id,
        iteration: e.iteration,
        target: e.target,
        objective: clip(e.objective, 1000),
        expectedOutcome: e.expectedOutcome === undefined ? undefined : clip(e.expectedOutcome, 1000),
        model: e.model,
        status: 'running',
        startedAt: e.time,
        evidence: [],
      }));
      return updateIteration(started, e.iteration, (row) => ({ ...row, delegations: row.delegations + 1 }));
    }),
  'delegation.result': (state, e) =>
    updateTask(state, e.taskId, (t) =>
      upsertDelegation(t, `${e.runId}:${e.delegationId}`, (d) => ({
        id: `${e.runId}:${e.delegationId}`,
        iteration: e.iteration,
        target: e.target,
        objective: d?.objective ?? clip(e.objective, 1000),
        expectedOutcome: d?.expectedOutcome,
        model: e.model,
        startedAt: d?.startedAt ?? e.time,
        status: e.status,
        durationMs: e.durationMs,
        tokens: e.usage.totalTokens,
        evidence: evidenceLines(e.result),
        summary: clip(e.result.summary, 2000),
        escalation: e.result.escalation === undefined ? undefined : clip(e.result.escalation, 1000),
        envelope: clip(e.envelope, 6000),
      })),
    ),
  'gate.started': (state, e) => {
    const gate = (g: GateView | undefined): GateView => ({
      name: e.gate,
      kind: e.kind,
      required: g?.required ?? true,
      command: e.command,
      ...(e.scope === 'affected' ? { part: { files: 0 } } : {}),
    });
    if (e.taskId === undefined) {
      // a hand-run of Run Quality Gates: each run has its own run id, and a new run starts a new list
      const base = state.workspaceGates[0]?.runId === e.runId ? state.workspaceGates : [];
      return { ...state, workspaceGates: upsertGate(base, e.gate, (g) => ({ ...gate(g), runId: e.runId })).slice(-LIMITS.workspaceGates) };
    }
    const mergeTarget = e.iteration === undefined ? mergeCheckTarget(state, e.taskId) : undefined;
    if (e.iteration === undefined && checkedAhead(state, e.taskId))
      return updateTask(state, e.taskId, (t) => ({ ...t, aheadGates: upsertGate(t.aheadGates ?? [], e.gate, gate) }));
    return updateTask(state, e.taskId, (t) => {
      const base = t.gatesIteration === e.iteration && t.gatesMergeTarget === mergeTarget ? t.gates : [];
      return { ...t, gates: upsertGate(base, e.gate, gate), gatesIteration: e.iteration, gatesMergeTarget: mergeTarget };
    });
  },
  'gate.finished': (state, e) => {
    const finish = (g: GateView | undefined): GateView => ({
      name: e.gate,
      kind: e.kind,
      required: e.required,
      command: g?.command,
      passed: e.passed,
      summary: clip(e.summary, 500),
      durationMs: e.durationMs,
      ...(e.tests ? { tests: testCounts(e.tests) } : {}),
      ...(e.severity ? { severity: e.severity } : {}),
      ...(e.integrity && (e.integrity.violations.length || e.integrity.allowed.length)
        ? {
            integrity: {
              violations: e.integrity.violations.slice(0, 20).map((v) => clip(v, 500)),
              allowed: e.integrity.allowed.slice(0, 20).map((v) => clip(v, 500)),
            },
          }
        : {}),
      ...(e.preExisting?.length ? { preExisting: e.preExisting.slice(0, 20).map((n) => clip(n, 300)) } : {}),
      ...(e.baseFailures?.length
        ? { baseFailures: e.baseFailures.slice(0, 20).map((b) => ({ name: clip(b.name, 300), held: b.held, why: clip(b.why, 500) })) }
        : {}),
      ...(e.flaky?.length ? { flaky: e.flaky.slice(0, 20).map((n) => clip(n, 300)) } : {}),
      ...(e.baselineNote ? { baselineNote: clip(e.baselineNote, 600) } : {}),
      ...(e.scope?.kind === 'affected' ? { part: { files: e.scope.files, ...(e.scope.of !== undefined ? { of: e.scope.of } : {}) } } : {}),
      ...(e.scope?.kind === 'full' ? { whole: clip(e.scope.why, 500) } : {}),
    });
    if (e.taskId === undefined) {
      const base = state.workspaceGates[0]?.runId === e.runId ? state.workspaceGates : [];
      return {
        ...state,
        workspaceGates: upsertGate(base, e.gate, (g) => ({ ...finish(g), runId: e.runId })).slice(-LIMITS.workspaceGates),
      };
    }
    const mergeTarget = e.iteration === undefined ? mergeCheckTarget(state, e.taskId) : undefined;
    // the merged check of a task still at work on its own gates: kept aside until its work is the queue's
    if (e.iteration === undefined && checkedAhead(state, e.taskId))
      return updateTask(state, e.taskId, (t) => ({ ...t, aheadGates: upsertGate(t.aheadGates ?? [], e.gate, finish) }));
    return updateTask(state, e.taskId, (t) => {
      const gates = upsertGate(t.gatesIteration === e.iteration && t.gatesMergeTarget === mergeTarget ? t.gates : [], e.gate, finish);
      const withGates: TaskView = {
        ...t,
        gates,
        gatesIteration: e.iteration,
        gatesMergeTarget: mergeTarget,
        ...(e.kind === 'tests' && e.tests ? { tests: testCounts(e.tests) } : {}),
      };
      return e.iteration === undefined
        ? withGates
        : updateIteration(withGates, e.iteration, (row) => ({ ...row, gates: gateCounts(gates) }));
    });
  },
} satisfies Handlers;
