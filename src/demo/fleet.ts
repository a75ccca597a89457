// `drainer demo`'s fleet act: a small second sandbox whose two rack hypervisors are cordoned at
// once under the fleet budget (fleet.maxConcurrentEvacuations, default 1). One takes the slot, the
// other waits Queued, first for a backup pod on it to end (fleet.blockers.podSelector), then for
// the slot, and evacuates when both allow; then both are uncordoned and put back. The report comes from the Node records' timeline, not the screen.
import type { OutStream } from '../output/stream.ts';
import { configSchema } from '../config/schema.ts';
import type { Logger } from '../observability/logger.ts';
import { startSandbox } from '../sandbox/index.ts';
import { demoConfig, startAgents, type DemoAgents } from './agents.ts';
import { FLEET_RACK, fleetScenario } from './fleet-scenario.ts';
import { cordon, inService } from './node.ts';
import { BLOCKER_SELECTOR, endBackup, startBackup } from './fleet-blocker.ts';
import { fleetView } from './render.ts';
import type { FleetReport } from './fleet-report.ts';
import { phaseResult } from './summary.ts';
import { maxEvacuating, recordPhases, turns } from './timeline.ts';
import { Tracker, type Snapshot } from './tracker.ts';
import { pollUntil, waitReady, type WaitOptions } from './wait.ts';

export interface FleetActOptions extends WaitOptions {
  readonly out: OutStream;
  readonly log: Logger;
  /** Simulated seconds per real second. */
  readonly scale: number;
}

export type { FleetReport } from './fleet-report.ts';

const DONE = new Set(['Evacuated', 'Failed']);

const allOf = (m: ReadonlyMap<string, Snapshot>, ok: (node: string, s: Snapshot) => boolean) =>
  [...m].every(([n, s]) => ok(n, s));

export async function runFleetAct(o: FleetActOptions): Promise<FleetReport> {
  const say = (line: string) => o.out.write(`${line}\n`);
  const sb = await startSandbox({ scenario: fleetScenario, scale: o.scale, log: o.log });
  const timeline = recordPhases(sb);
  let agents: DemoAgents | undefined;
  try {
    const config = demoConfig(sb.drainerConfig, {
      // looked at often: the act is seconds long
      fleet: { blockers: { podSelector: BLOCKER_SELECTOR, interval: 0.1 } },
    });
    const fleet = configSchema.parse(config).fleet;
    const nodes: string[] = [...FLEET_RACK];
    const spare = sb.scenario.nodes.map((n) => n.name).filter((n) => !nodes.includes(n));
    say(
      `\nFleet: sandbox "${sb.scenario.name}" (${nodes.join(', ')} with ${sb.scenario.openstack.servers.length} Nova servers, ` +
        `${spare.join(', ')} empty), fleet.maxConcurrentEvacuations: ${fleet.maxConcurrentEvacuations}`,
    );
    agents = startAgents({
      nodes: sb.scenario.nodes.map((n) => n.name),
      config,
      kubeconfigYaml: sb.kube.kubeconfig(),
      log: o.log.child({ sandbox: sb.scenario.name }),
      signal: o.signal,
    });
    await waitReady(agents, o);
    const trackers = new Map(nodes.map((n) => [n, new Tracker(sb, n, fleet.namespace)]));
    const [first = '', second = ''] = nodes;
    const held = new Set<string>();
    let backup = true;
    const read = () => {
      const m = new Map([...trackers].map(([n, t]) => [n, t.snapshot()]));
      for (const [n, s] of m) if (s.record?.waiting?.kind === 'pods') held.add(n);
      // the backup ends while the first node evacuates: the second then waits for the slot
      if (backup && m.get(first)?.phase === 'Evacuating' && held.has(second)) {
        backup = false;
        void endBackup(sb).catch((err: unknown) => o.log.warn({ err }, 'backup pod not deleted'));
      }
      return m;
    };
    await startBackup(sb, second);
    say(
      `a backup pod (${BLOCKER_SELECTOR}) runs on ${second}: fleet.blockers.podSelector holds that node until it ends`,
    );
    say(
      `kubectl cordon ${nodes.join(' ')}   (at once: one takes the slot, the other waits Queued behind it)`,
    );
    const t0 = { sim: sb.clock.now(), real: Date.now() };
    const view = fleetView(o.out, nodes, t0.sim);
    await Promise.all(nodes.map((n) => cordon(sb, n, true)));
    const evac = await pollUntil(
      o,
      () => {
        const m = read();
        view.update(m);
        return m;
      },
      (m) => allOf(m, (_n, s) => DONE.has(s.phase)),
    );
    const settled = new Map([...trackers].map(([n, t]) => [n, t.settle()]));
    view.update(settled);
    view.done();
    const phases = [...evac.value.values()].map((s) => s.phase);
    const reached = !evac.reached ? 'timeout' : phases.includes('Failed') ? 'Failed' : 'Evacuated';
    const evacuation = phaseResult(reached, sb, t0);

    say(`kubectl uncordon ${nodes.join(' ')}`);
    const t1 = { sim: sb.clock.now(), real: Date.now() };
    await Promise.all(nodes.map((n) => cordon(sb, n, false)));
    const back = await pollUntil(o, read, (m) => allOf(m, (n, s) => inService(sb, n, s)));
    const restore = phaseResult(back.reached ? 'InService' : 'timeout', sb, t1);
    say(`${nodes.join(', ')}: ${back.reached ? 'back in service' : 'not back in service'}`);

    const changes = [...timeline.changes];
    const fleetTurns = turns(changes, nodes);
    const most = maxEvacuating(changes);
    const budget = fleet.maxConcurrentEvacuations;
    return {
      budget,
      nodes,
      turns: fleetTurns,
      changes,
      maxEvacuating: most,
      held: [...held].sort(),
      items: Object.fromEntries([...settled].map(([n, s]) => [n, s.items])),
      evacuation,
      restore,
      ok:
        fleetTurns.every((t) => t.reached === 'Evacuated') &&
        (typeof budget !== 'number' || budget === 0 || most <= budget) &&
        restore.reached === 'InService',
    };
  } finally {
    timeline.stop();
    await agents?.stop();
    await sb.close();
  }
}
