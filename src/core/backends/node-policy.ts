// A node's own maintenance policy, from its labels or annotations (an annotation wins):
// drainer.dev/migration-mode = auto | manual | skip, and drainer.dev/reboot = true (the maintenance
// is a reboot, so a VM stopped on the host may stay). Pure, so the reconciler, the plan and the
// refusal read it alike.
import { MIGRATION_MODE_KEY, REBOOT_KEY } from '../../names.ts';
import type { NodeObject } from '../cluster/objects.ts';
import type { NodeRef } from './plugin.ts';

export const MIGRATION_MODES = ['auto', 'manual', 'skip'] as const;
export type MigrationMode = (typeof MIGRATION_MODES)[number];

const valueOf = (node: NodeObject, key: string): string | undefined =>
  node.metadata?.annotations?.[key] ?? node.metadata?.labels?.[key];

/** The node's mode, or the line that says why its value is refused. */
export function migrationMode(node: NodeObject): { mode: MigrationMode } | { invalid: string } {
  const raw = valueOf(node, MIGRATION_MODE_KEY);
  if (raw === undefined || raw === '') return { mode: 'auto' };
  if ((MIGRATION_MODES as readonly string[]).includes(raw)) return { mode: raw as MigrationMode };
  return {
    invalid: `node ${node.metadata?.name ?? ''}: ${MIGRATION_MODE_KEY}=${JSON.stringify(raw)} is not one of ${MIGRATION_MODES.join(', ')}`,
  };
}

/** The node as the plugins see it: its name, how its VMs leave, whether the maintenance is a reboot. */
export function nodeRef(name: string, node: NodeObject | undefined): NodeRef {
  if (!node) return { name };
  const m = migrationMode(node);
  const reboot = valueOf(node, REBOOT_KEY) === 'true';
  return {
    name,
    ...('mode' in m && m.mode === 'manual' ? { mode: 'manual' as const } : {}),
    ...(reboot ? { reboot } : {}),
  };
}
