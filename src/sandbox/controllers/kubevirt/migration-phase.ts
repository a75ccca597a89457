// A VirtualMachineInstanceMigration's phases as the migration controller walks them and as the
// evacuation controller and admission read them.
import type { KubeObject } from '../../kube/types.ts';

const STEPS = ['Scheduling', 'Scheduled', 'PreparingTarget', 'TargetReady', 'Running'] as const;
export const IN_FLIGHT: ReadonlySet<string> = new Set(STEPS);
export const isFinal = (m: KubeObject): boolean => ['Succeeded', 'Failed'].includes(phaseOf(m) ?? '');

export const phaseOf = (m: KubeObject): string | undefined =>
  (m.status as { phase?: string } | undefined)?.phase;
