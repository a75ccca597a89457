// The steps of issue 48: what the cluster's own lifecycle does to what drainer changed. A Node
// deleted and registered again the moment a node reaches a phase (or right after drainer stopped a
// server on it), an agent taken off its node by label and put back, a stopped server moved by its
// owner onto a host that then goes into maintenance, a VMI made again under its name mid-evacuation,
// and KubeVirt's migration queue full while a migration in flight fails.
import { FLEET_NODES, AGENT_LABEL } from './fleet.ts';
import { agentBack, leftWithoutAgent } from './agent-off.ts';
import { vmsOn } from './drains.ts';
import type { StepContext } from './faults.ts';
import type { RecreateAt, Step, StepKind } from './schedule.ts';

/** The kinds of step this file runs. */
export const LIFECYCLE_KINDS: ReadonlySet<StepKind> = new Set<StepKind>([
  'node-recreate',
  'agent-off',
  'agent-on',
  'stopped-onto-maintenance',
  'vmi-recreate',
  'kubevirt-queue',
]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Real ms a node-recreate waits for a node to reach its moment. */
export const RECREATE_WAIT_MS = 8000;
/** Real ms a recreated VMI waits for the old one to be gone (its grace period at the soak's scale). */
const VMI_GONE_MS = 6000;

/** The drawn node first, then the others in fleet order. */
const fromNode = (node: string): string[] => {
  const at = Math.max(0, FLEET_NODES.indexOf(node));
  return [...FLEET_NODES.slice(at), ...FLEET_NODES.slice(0, at)];
};

/** The node to delete: the first (from the drawn one) whose record is in the phase, or where drainer just stopped a server. */
export async function recreateTarget(
  c: Pick<StepContext, 'maintenances' | 'owners'>,
  node: string,
  at: RecreateAt,
  waitMs = RECREATE_WAIT_MS,
): Promise<string | undefined> {
  if (at === 'any') return node;
  const stops = c.owners.powerChanges.length;
  for (const end = Date.now() + waitMs; Date.now() < end;) {
    if (at === 'stopped') {
      const stop = c.owners.powerChanges.slice(stops).find((p) => p.by === 'drainer' && p.to === 'stopped');
      if (stop?.host) return stop.host;
    } else {
      const found = fromNode(node).find((n) => c.maintenances.phase(n) === at);
      if (found) return found;
    }
    await sleep(50);
  }
  return undefined;
}

export async function runLifecycleStep(step: Step, c: StepContext): Promise<boolean> {
  const { fleet, operator } = c;
  switch (step.kind) {
    case 'node-recreate': {
      const node = await recreateTarget(c, step.node, step.at);
      if (!node) return false;
      await operator.recreateNode(node);
      await agentBack(fleet, node);
      return true;
    }
    case 'agent-off': {
      if (fleet.disabled.has(step.node)) return false;
      fleet.disabled.add(step.node);
      await operator.label(step.node, AGENT_LABEL, 'disabled');
      // the DaemonSet controller deletes the pod: SIGTERM, the agent stops as the daemon does
      await Promise.all((fleet.agents.get(step.node) ?? []).map((a) => a.stop()));
      leftWithoutAgent(fleet, step.node, vmsOn(fleet, step.node));
      return true;
    }
    case 'agent-on':
      if (!fleet.disabled.has(step.node)) return false;
      await enableAgent(c, step.node);
      return true;
    case 'stopped-onto-maintenance': {
      const host = await c.owners.moveStopped(c.r);
      if (!host || !FLEET_NODES.includes(host)) return false;
      await operator.cordon(host, true);
      await sleep(step.holdMs);
      await operator.cordon(host, false);
      return true;
    }
    case 'vmi-recreate': {
      const vmis = (await operator.vmis()).filter((v) => !v.status?.phase || v.status.phase === 'Running');
      const busy = vmis.filter((v) => {
        const n = v.metadata.labels?.['kubevirt.io/nodeName'];
        return n !== undefined && c.maintenances.current(n) !== undefined;
      });
      const pool = (busy.length ? busy : vmis).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
      if (!pool.length) return false;
      await operator.recreateVmi(c.r.pick(pool), VMI_GONE_MS);
      return true;
    }
    case 'kubevirt-queue': {
      await operator.kubevirtParallel(1);
      await sleep(step.forMs / 2);
      await operator.failMigrationInFlight((xs) => c.r.pick(xs));
      await sleep(step.forMs / 2);
      await operator.kubevirtParallel(5);
      return true;
    }
    default:
      throw new Error(`not a lifecycle step: ${JSON.stringify(step)}`);
  }
}

/** `kubectl label node N drainer.dev/agent-`: the DaemonSet runs an agent there again. */
export async function enableAgent(c: Pick<StepContext, 'fleet' | 'operator'>, node: string): Promise<void> {
  await c.operator.label(node, AGENT_LABEL, null);
  await agentBack(c.fleet, node);
}
