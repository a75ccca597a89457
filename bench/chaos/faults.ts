// Runs one step of a schedule against the fleet. A step that opens a fault window waits it out and
// closes it, so each step leaves no fault behind (the schedule's steps stay independent).
import type { DrainerCli } from './cli.ts';
import { gateDeletedWithoutAgent, leftWithoutAgent } from './agent-off.ts';
import { vmsOn, type Drains } from './drains.ts';
import { FLEET_NODES, SCALE, type Fleet } from './fleet.ts';
import type { Maintenances } from './maintenances.ts';
import type { Operator } from './operator.ts';
import type { Owners } from './owners.ts';
import type { Prng } from './prng.ts';
import type { Step } from './schedule.ts';
import { LIFECYCLE_KINDS, runLifecycleStep } from './lifecycle-steps.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface StepContext {
  readonly fleet: Fleet;
  readonly operator: Operator;
  readonly drains: Drains;
  readonly maintenances: Maintenances;
  readonly cli: DrainerCli;
  readonly owners: Owners;
  /** The round's own draws (which server an owner acts on). */
  readonly r: Prng;
  readonly round: number;
}

/** The drawn node if it is in maintenance, else the next in fleet order that is (an operator acts on one). */
export function inMaintenance(node: string, m: Pick<Maintenances, 'current'>): string | undefined {
  const from = Math.max(0, FLEET_NODES.indexOf(node));
  const order = [...FLEET_NODES.slice(from), ...FLEET_NODES.slice(0, from)];
  return order.find((n) => m.current(n) !== undefined);
}

/** Runs the step; false when it found nothing to act on (a drain already running for the node). */
export async function runStep(step: Step, c: StepContext): Promise<boolean> {
  const { fleet, operator } = c;
  if (LIFECYCLE_KINDS.has(step.kind)) return runLifecycleStep(step, c);
  switch (step.kind) {
    case 'cordon':
    case 'uncordon':
      await operator.cordon(step.node, step.kind === 'cordon');
      return true;
    case 'maintenance-create':
      await operator.createMaintenance(step.node);
      return true;
    case 'maintenance-delete':
      await operator.deleteMaintenance(step.node);
      return true;
    case 'taint':
    case 'untaint':
      await operator.taint(step.node, step.kind === 'taint');
      return true;
    case 'kubectl-drain':
      return c.drains.start(step.node, 'kubectl', c.round);
    case 'release': {
      const node = inMaintenance(step.node, c.maintenances);
      if (!node) return false;
      const from = c.maintenances.now();
      const maintenance = c.maintenances.current(node);
      const r = await c.cli('release', '--node', node, ...(step.force ? ['--force'] : []));
      if (r.code === 0) c.maintenances.released(node, from, maintenance);
      return true;
    }
    case 'restore-force': {
      const node = inMaintenance(step.node, c.maintenances);
      if (!node) return false;
      const restored = await c.cli('restore', '--node', node, '--force');
      // a node whose agent the operator took off, given back into service: a gate stays only for VMs left
      if (restored.code === 0) leftWithoutAgent(fleet, node, vmsOn(fleet, node));
      return true;
    }
    case 'start-now-twice':
      await c.cli('start', '--node', step.node, '--now');
      await sleep(300);
      await c.cli('start', '--node', step.node, '--now');
      return true;
    case 'daemonset-recreate':
      await operator.recreateDaemonSet(fleet.config.fleet.daemonSet, step.gapMs);
      return true;
    case 'owner':
      return (await c.owners.act(step.action, c.r)).status !== undefined;
    case 'gate-pod-delete':
      gateDeletedWithoutAgent(fleet, step.node);
      await operator.deleteGatePod(step.node);
      return true;
    case 'gate-pdb-delete':
      gateDeletedWithoutAgent(fleet, step.node);
      await operator.deleteGatePdb(step.node);
      return true;
    case 'clock-skew':
      fleet.skews.set(step.node, step.skewSeconds * 1000);
      return true;
    default:
      return runOutage(step, fleet);
  }
}

/** Agents and APIs going away for a while. */
async function runOutage(step: Step, fleet: Fleet): Promise<boolean> {
  const nova = fleet.sandbox.openstack.faults;
  switch (step.kind) {
    case 'agent-kill': {
      if (fleet.disabled.has(step.node)) return false; // no agent there: the DaemonSet runs none
      const running = fleet.agents.get(step.node) ?? [];
      await Promise.all(running.map((a) => a.kill()));
      await sleep(step.downMs);
      // the container restarts in the same pod: the same instance (it takes its Lease back at once)
      await fleet.startAgent(step.node, running[0]?.instance);
      return true;
    }
    case 'agent-rollout': {
      if (fleet.disabled.has(step.node)) return false;
      const old = fleet.agents.get(step.node) ?? [];
      await fleet.startAgent(step.node);
      await sleep(step.overlapMs);
      await Promise.all(old.map((a) => a.stop()));
      return true;
    }
    case 'api-restart':
      for (const p of fleet.proxies()) p.down(step.downMs);
      fleet.sandbox.kube.faults.dropWatches();
      fleet.sandbox.kube.faults.compactHistory(); // a new watch cache: older resourceVersions are gone
      await sleep(step.downMs);
      return true;
    case 'api-drop':
      for (const p of fleet.proxies()) p.drop();
      return true;
    case 'api-errors':
      // the sandbox's fault window is in simulated time
      fleet.sandbox.kube.faults.failRequests({ status: step.status, forMs: step.forMs * SCALE });
      await sleep(step.forMs);
      return true;
    case 'nova-errors':
      nova.errorRate = step.rate;
      await sleep(step.forMs);
      nova.errorRate = 0;
      return true;
    case 'nova-slow':
      nova.latencyMs = step.latencyMs;
      await sleep(step.forMs);
      nova.latencyMs = 0;
      return true;
    default:
      throw new Error(`unknown step ${JSON.stringify(step)}`);
  }
}
