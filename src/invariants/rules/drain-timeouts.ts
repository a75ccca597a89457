// drainer doctor's fleet tools that would give up on a held drain (issue 50 item 2): per node with
// VMs on its host, a Cluster API Machine's nodeDrainTimeout (unless drainer's pre-drain hook is on
// it) or a Karpenter NodePool's terminationGracePeriod shorter than drainer's own deadlines let the
// evacuation take. An operator finding: nothing broke yet, a setting would take the VMs down.
import { NODEPOOL_LABEL } from '../../core/capi/tool-timeouts.ts';
import { boundOf, shortTimeouts, type ToolTimeout } from '../../core/capi/timeouts.ts';
import { hostOfNode } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World, WorldNode } from '../world.ts';

const FINAL = new Set(['Succeeded', 'Failed']);

function timeoutsOf(world: World, node: WorldNode): ToolTimeout[] {
  const found: ToolTimeout[] = [];
  const m = world.machines?.find((x) => x.node === node.name);
  if (m?.drainTimeoutSeconds !== undefined)
    found.push({
      tool: 'Cluster API',
      object: `Machine ${m.namespace}/${m.name}`,
      field: 'nodeDrainTimeout',
      seconds: m.drainTimeoutSeconds,
      hooked: m.hooked,
    });
  const pool = world.nodePools?.find((p) => p.name === node.labels[NODEPOOL_LABEL]);
  if (pool?.terminationGracePeriodSeconds !== undefined)
    found.push({
      tool: 'Karpenter',
      object: `NodePool ${pool.name}`,
      field: 'terminationGracePeriod',
      seconds: pool.terminationGracePeriodSeconds,
    });
  return found;
}

export function drainTimeoutsShort(world: World, opts: CheckOptions): Violation[] {
  const deadlines = opts.deadlines;
  if (!deadlines || (!world.machines && !world.nodePools)) return [];
  return world.nodes.flatMap((node) => {
    const timeouts = timeoutsOf(world, node);
    if (!timeouts.length) return [];
    const host = hostOfNode(world, node.name, opts);
    const servers = host ? (world.nova?.servers ?? []).filter((s) => s.host === host).length : 0;
    const vmis = (world.vmis ?? []).filter(
      (v) => v.node === node.name && !v.deleting && !FINAL.has(v.phase ?? ''),
    ).length;
    const bound = boundOf(
      [
        { plugin: 'nova', vms: servers },
        { plugin: 'kubevirt', vms: vmis },
      ],
      deadlines,
    );
    return shortTimeouts(bound, timeouts).map((f) =>
      violation('drain-timeout-short', `node/${node.name}`, f.text, f.fix),
    );
  });
}
