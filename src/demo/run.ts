// `drainer demo`: the sandbox plus one agent per node; cordon a node that holds Nova servers, VMIs
// and pods, show the evacuation live, uncordon, wait until the node is back in service, summarize.
// Then the fleet act (fleet.ts): two nodes cordoned at once, one waiting Queued for the slot.
import type { OutStream } from '../output/stream.ts';
import { configSchema } from '../config/schema.ts';
import type { Logger } from '../observability/logger.ts';
import { startSandbox } from '../sandbox/index.ts';
import { startAgents, demoConfig, type DemoAgents } from './agents.ts';
import { runFleetAct, type FleetReport } from './fleet.ts';
import { renderFleetSummary } from './fleet-summary.ts';
import { renderDrainSummary, runDrainAct, type DrainActReport } from './drain-act.ts';
import { cordon, inService, pickNode } from './node.ts';
import { plainView, ttyView, type ProgressView } from './render.ts';
import {
  closingLine,
  countCalls,
  phaseResult,
  renderSummary,
  type ActReport,
  type DemoReport,
} from './summary.ts';
import { Tracker, type Snapshot } from './tracker.ts';
import { keepText } from './keep.ts';
import { pollUntil, waitReady } from './wait.ts';

export interface DemoOptions {
  readonly out: OutStream;
  /** Agents' logs (the screen is for progress). */
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly scenario?: string;
  /** Simulated seconds per real second. */
  readonly scale: number;
  /** The node to cordon; default the first that holds Nova servers, VMIs and pods. */
  readonly node?: string;
  /** Where kubeconfig and config.yaml are written. */
  readonly stateDir: string;
  readonly cwd: string;
  /** Leave the sandbox and agents running after the summary, until the signal aborts. */
  readonly keep: boolean;
  /** Real seconds each phase may take. */
  readonly timeoutSeconds: number;
  /** Real milliseconds between progress redraws. */
  readonly tickMs?: number;
  /** Run the fleet act after the first one (default true). */
  readonly fleet?: boolean;
  /** The drain act: the kubectl to drain with, false for the Eviction-API loop; undefined skips it. */
  readonly drain?: string | false;
}

/** Polls the tracker until `until` holds, the time is up or the signal aborts. */
async function follow(
  o: DemoOptions,
  tracker: Tracker,
  view: ProgressView | undefined,
  until: (s: Snapshot) => boolean,
): Promise<{ snapshot: Snapshot; reached: boolean }> {
  const read = () => {
    const s = tracker.snapshot();
    view?.update(s);
    return s;
  };
  const { value, reached } = await pollUntil(o, read, until);
  return { snapshot: value, reached };
}

/** The fleet act and the drain act, each on its own small sandbox, unless skipped or stopped. */
async function laterActs(o: DemoOptions): Promise<{ fleet?: FleetReport; drain?: DrainActReport }> {
  let fleet: FleetReport | undefined;
  if (o.fleet !== false && !o.signal.aborted) {
    fleet = await runFleetAct(o);
    o.out.write(renderFleetSummary(fleet));
  }
  let drain: DrainActReport | undefined;
  if (o.drain !== undefined && !o.signal.aborted) {
    drain = await runDrainAct({ ...o, kubectl: o.drain });
    o.out.write(renderDrainSummary(drain));
  }
  return { ...(fleet ? { fleet } : {}), ...(drain ? { drain } : {}) };
}

export async function runDemo(o: DemoOptions): Promise<DemoReport> {
  const started = Date.now();
  const say = (line: string) => o.out.write(`${line}\n`);
  const sb = await startSandbox({
    ...(o.scenario ? { scenario: o.scenario } : {}),
    scale: o.scale,
    stateDir: o.stateDir,
    log: o.log,
  });
  let agents: DemoAgents | undefined;
  try {
    const node = o.node ?? pickNode(sb);
    const sc = sb.scenario;
    say(
      `drainer demo: sandbox "${sc.name}" (${sc.nodes.length} nodes, ${sc.openstack.servers.length} Nova servers, ` +
        `${sc.kubevirt.installed ? sc.kubevirt.vmis.length : 0} VMIs), clock ×${o.scale}, one agent per node`,
    );
    const config = demoConfig(sb.drainerConfig);
    agents = startAgents({
      nodes: sc.nodes.map((n) => n.name),
      config,
      kubeconfigYaml: sb.kube.kubeconfig(),
      log: o.log,
      signal: o.signal,
    });
    await waitReady(agents, o);
    const tracker = new Tracker(sb, node, configSchema.parse(config).fleet.namespace);
    const first = tracker.snapshot();
    const nova = first.items.filter((i) => i.kind === 'nova').length;
    say(
      `kubectl cordon ${node}   (${nova} Nova servers, ${first.items.length - nova} VMIs, ${first.pods.total} pods to drain; times below are simulated)`,
    );
    const t0 = { sim: sb.clock.now(), real: Date.now() };
    const view = o.out.isTTY ? ttyView(o.out, node, t0.sim) : plainView(o.out, node, t0.sim);
    await cordon(sb, node, true);
    const evac = await follow(o, tracker, view, (s) => s.phase === 'Evacuated' || s.phase === 'Failed');
    const settled = tracker.settle();
    view.update(settled);
    view.done();
    const reached = evac.reached ? evac.snapshot.phase : 'timeout';
    const evacuation = { ...phaseResult(reached, sb, t0), record: evac.snapshot.record };
    if (reached === 'Failed')
      say(`${node}: evacuation FAILED: ${evac.snapshot.record?.lastError ?? 'see the summary'}`);

    say(`kubectl uncordon ${node}`);
    const t1 = { sim: sb.clock.now(), real: Date.now() };
    await cordon(sb, node, false);
    const back = await follow(o, tracker, undefined, (s) => inService(sb, node, s));
    const restore = phaseResult(back.reached ? 'InService' : back.snapshot.phase, sb, t1);
    say(
      `${node}: ${restore.reached === 'InService' ? 'back in service' : `not back in service (${restore.reached})`}`,
    );

    const act: ActReport = {
      node,
      scale: o.scale,
      evacuation,
      restore,
      items: settled.items,
      pods: settled.pods,
      ...countCalls(sb.kube.requestLog, sb.openstack.requestLog),
    };
    o.out.write(renderSummary(act));
    const { fleet, drain } = await laterActs(o);
    const report: DemoReport = {
      ...act,
      ...(fleet ? { fleet } : {}),
      ...(drain ? { drain } : {}),
      realMs: Date.now() - started,
      ok:
        reached === 'Evacuated' &&
        restore.reached === 'InService' &&
        (fleet?.ok ?? true) &&
        (drain?.ok ?? true),
    };
    o.out.write(closingLine(report));
    if (o.keep && !o.signal.aborted) {
      o.out.write(keepText(sb, node, o.cwd));
      await new Promise<void>((done) => {
        if (o.signal.aborted) done();
        else o.signal.addEventListener('abort', () => done(), { once: true });
      });
    }
    return report;
  } finally {
    await agents?.stop();
    await sb.close();
  }
}
