import { PROOF_KINDS, type ProofKind } from '../core/tasks/schema';

/** How a parser reports a mistake (its own usage error). */
type UsageErrorOf = (message: string) => Error;

/** `--check`, `--proof`, `--proof-test`, `--known-failure` (task add and task edit; `--known-failure ""` clears the list). */
export function verdictOptions(
  values: { check?: string; proof?: string; 'proof-test'?: string[]; 'known-failure'?: string[] },
  usage: UsageErrorOf,
): { check?: string; proof?: ProofKind; proofTests?: string[]; knownFailures?: string[] } {
  if (values.proof !== undefined && !(PROOF_KINDS as readonly string[]).includes(values.proof))
    throw usage(`--proof must be one of ${PROOF_KINDS.join(', ')}`);
  return {
    ...(values.check !== undefined ? { check: values.check.trim() } : {}),
    ...(values.proof !== undefined ? { proof: values.proof as ProofKind } : {}),
    ...(values['proof-test']?.length ? { proofTests: values['proof-test'].map((g) => g.trim()).filter(Boolean) } : {}),
    ...(values['known-failure']?.length ? { knownFailures: values['known-failure'].map((n) => n.trim()).filter(Boolean) } : {}),
  };
}

/** `--allow-gate-changes all` allows every gate; gate names allow those. */
export function gateAllowance(values: string[] | undefined, usage: UsageErrorOf): true | string[] | undefined {
  if (!values || values.length === 0) return undefined;
  const names = values.map((v) => v.trim());
  if (names.some((n) => n === '')) throw usage('--allow-gate-changes needs "all" or a gate name');
  return names.includes('all') ? true : names;
}
