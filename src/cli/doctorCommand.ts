import { type DoctorCheck, doctor } from '../core/doctor';
import type { CliIo } from './io';

/**
 * `ralph doctor`: what a run here needs and whether this machine has it — git, the repository,
 * the configuration, the sandbox, each model endpoint, what the gates call — with the fix for
 * each thing missing. Exit 1 when something needed is missing; a missing sandbox under "auto" is
 * a warning (the run goes on unconfined).
 */
export async function runDoctorCommand(workspace: string, json: boolean, io: CliIo): Promise<number> {
  const checks = await doctor(workspace);
  if (json) io.out(JSON.stringify({ checks, ok: !checks.some(neededMissing) }, null, 2));
  else for (const line of doctorLines(checks)) io.out(line);
  return checks.some(neededMissing) ? 1 : 0;
}

const neededMissing = (c: DoctorCheck) => !c.ok && c.needed;

export function doctorLines(checks: readonly DoctorCheck[]): string[] {
  const lines = checks.map(
    (c) => `${c.ok ? 'ok     ' : c.needed ? 'MISSING' : 'warning'}  ${c.name}: ${c.detail}${c.fix ? `\n         fix: ${c.fix}` : ''}`,
  );
  const missing = checks.filter(neededMissing).length;
  const warned = checks.filter((c) => !c.ok && !c.needed).length;
  lines.push(
    missing > 0
      ? `${missing} thing${missing === 1 ? '' : 's'} a run needs ${missing === 1 ? 'is' : 'are'} missing`
      : `ready to run${warned > 0 ? ` (${warned} warning${warned === 1 ? '' : 's'})` : ''}`,
  );
  return lines;
}
