// run-once's and plan's stand-ins for the Node's own policy when there is no Kubernetes to read it from:
// --migration-mode (drainer.dev/migration-mode) and --reboot (drainer.dev/reboot=true). With
// Kubernetes the Node's labels and annotations decide, so the flags are refused there (one line,
// exit 2) rather than silently ignored or let to contradict the Node.
import type { Argv } from 'yargs';
import type { NodeRef } from '../core/backends/plugin.ts';
import { MIGRATION_MODE_KEY, REBOOT_KEY } from '../names.ts';

export interface NodeFlagArgs {
  migrationMode?: 'auto' | 'manual';
  reboot?: boolean;
}

export const withNodeFlags = <T>(y: Argv<T>): Argv<T & NodeFlagArgs> =>
  y
    .option('migration-mode', {
      choices: ['auto', 'manual'] as const,
      describe: `without Kubernetes: the node's ${MIGRATION_MODE_KEY} (manual: drainer moves nothing and waits until someone else has emptied the host)`,
    })
    .option('reboot', {
      type: 'boolean',
      describe: `without Kubernetes: the maintenance is a reboot (${REBOOT_KEY}=true), so a VM whose way out is stop may stay on the host`,
    });

/** The node as the flags declare it, or the line that refuses them (Kubernetes configured). */
export function declaredNode(
  node: string,
  args: NodeFlagArgs,
  kube: boolean,
): { ref: NodeRef } | { refused: string } {
  const given = args.migrationMode !== undefined || args.reboot !== undefined;
  if (kube && given)
    return {
      refused: `--migration-mode and --reboot are for a node without Kubernetes; with Kubernetes set ${MIGRATION_MODE_KEY} or ${REBOOT_KEY} on Node ${node}`,
    };
  return {
    ref: {
      name: node,
      ...(args.migrationMode === 'manual' ? { mode: 'manual' as const } : {}),
      ...(args.reboot === true ? { reboot: true } : {}),
    },
  };
}
