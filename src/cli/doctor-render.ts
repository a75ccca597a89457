// drainer doctor's output: what it looked at, and each finding with its object, evidence and fix.
import type { Violation } from '../invariants/violation.ts';
import type { World } from '../invariants/world.ts';

export interface DoctorReport {
  readonly ok: boolean;
  /** How much of each kind was looked at (null: not looked at, e.g. Nova disabled, Leases unreadable). */
  readonly looked: Readonly<Record<string, number | null>>;
  readonly findings: readonly Violation[];
  /** Where the settings came from (the agents' ConfigMap, or this machine's only). */
  readonly config?: string;
}

export function doctorReport(world: World, findings: readonly Violation[]): DoctorReport {
  return {
    ok: findings.length === 0,
    looked: {
      nodes: world.nodes.length,
      nodeMaintenances: world.maintenances.length,
      gatePods: world.gatePods.length,
      gatePdbs: world.gatePdbs.length,
      leases: world.leases?.length ?? null,
      events: world.events.length,
      novaComputeServices: world.nova?.services.length ?? null,
      servers: world.nova?.servers.length ?? null,
      migrations: world.nova?.migrations.length ?? null,
    },
    findings,
  };
}

export function doctorText(r: DoctorReport): string {
  const looked = Object.entries(r.looked)
    .map(([k, v]) => `${v ?? 'not read'} ${k}`)
    .join(', ');
  const head = `looked at: ${looked}\n${r.config ? `config: ${r.config}\n` : ''}`;
  if (r.ok) return `${head}no finding: every promise holds\n`;
  const blocks = r.findings.map(
    (f) => `FINDING ${f.id}: ${f.object}\n  evidence: ${f.evidence}\n  fix: ${f.fix}\n`,
  );
  return `${head}${blocks.join('')}${r.findings.length} finding(s)\n`;
}
