// `drainer plan` as the dry run of the real thing: every check the evacuation makes before its
// first change (the plugins' plans and blockers, the capacity verdict, the pods the drain would
// refuse or a budget would hold, the fleet queue, the drain gate), read-only, into one verdict.
// Each check is the evacuation's own function; this file only gathers them and weighs the answers.
import type { Config } from '../../config/schema.ts';
import { isBadInput, isNotFoundError } from '../../errors.ts';
import type { KubeClients } from '../../kube/client.ts';
import { previewDrain, type DrainPreview } from '../../kube/drain-preview.ts';
import { getNode } from '../../kube/node.ts';
import { kubeFleetApi } from '../fleet/kube-port.ts';
import { previewFleet, type FleetPreview } from '../fleet/preview.ts';
import type { PluginHost } from '../backends/host.ts';
import type { Logger } from '../../observability/logger.ts';
import { MIGRATION_MODE_KEY } from '../../names.ts';
import { optOutReason } from '../agent/desired.ts';
import { migrationMode, nodeRef } from '../backends/node-policy.ts';
import type { NodeObject } from '../cluster/objects.ts';
import type { NodeRef, Plan, PlannedWorkload } from '../backends/plugin.ts';
import { checkStart, type StartCheck } from './preflight-start.ts';
import { parseRecord, STATE_ANNOTATION } from '../record/record.ts';

/** The drain gate's own pre-flight (core/gate/probe.ts): whether it holds drains now, as a note. */
export interface GateCheck {
  /** held: a drain of the node waits for drainer; not-held: it would not; off: drainGate.enabled false. */
  readonly state?: 'held' | 'not-held' | 'off';
  readonly refuse?: string;
  readonly note?: string;
}
export type GateProbe = (node: string, signal: AbortSignal) => Promise<GateCheck>;

/** would-wait: nothing refuses it, but a window, a freeze or a blocker holds its start now. */
export type PlanVerdict = 'would-succeed' | 'would-wait' | 'refused' | 'unknown' | 'bad-input';

/** `drainer plan`'s exit codes (README "drainer plan"). */
export const PlanExit = { wouldSucceed: 0, unknown: 1, badInput: 2, refused: 3 } as const;

export interface PreflightReport {
  readonly node: string;
  readonly verdict: PlanVerdict;
  /** Why it would be refused or blocked. */
  readonly reasons: readonly string[];
  /** Why it would not start now (a window, a freeze, a blocker), naming the config key. */
  readonly waits: readonly string[];
  /** What could not be found out (an API that failed). */
  readonly unknown: readonly string[];
  /** Bad input: a node the cluster does not have, credentials refused, no compute service. */
  readonly invalid: readonly string[];
  /** Worth knowing, not a refusal: warnings, waits, checks that are off. */
  readonly notes: readonly string[];
  readonly plans: readonly Plan[];
  readonly errors: readonly { plugin: string; message: string }[];
  readonly pods?: DrainPreview;
  readonly fleet?: FleetPreview;
  readonly gate?: GateCheck;
  /** Windows, freezes and blockers at this instant, as the node's agent would weigh them. */
  readonly start?: StartCheck;
}

export interface PreflightInput {
  readonly node: string;
  readonly config: Config;
  readonly host: PluginHost;
  readonly log: Logger;
  readonly signal: AbortSignal;
  /** Without Kubernetes (a bare host) only the plugins are asked, as run-once would. */
  readonly kube?: KubeClients;
  readonly gate?: GateProbe;
  /** false: windows, freezes and blockers are not weighed (run-once, which starts now). */
  readonly startGate?: false;
  readonly now?: () => Date;
  /** Without Kubernetes: the node as the command line declares it (run-once --migration-mode, --reboot). */
  readonly declared?: NodeRef;
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Collects the answers; a check that throws lands in `unknown` (or bad input). */
class Findings {
  readonly reasons: string[] = [];
  readonly unknown: string[] = [];
  readonly notes: string[] = [];
  readonly badInput: string[] = [];
  readonly waits: string[] = [];

  failed(what: string, err: unknown): void {
    (isBadInput(err) ? this.badInput : this.unknown).push(`${what}: ${messageOf(err)}`);
  }

  verdict(): PlanVerdict {
    if (this.badInput.length) return 'bad-input';
    if (this.reasons.length) return 'refused';
    if (this.waits.length) return 'would-wait';
    return this.unknown.length ? 'unknown' : 'would-succeed';
  }
}

export const planExitCode = (v: PlanVerdict): number =>
  v === 'would-succeed'
    ? PlanExit.wouldSucceed
    : v === 'refused' || v === 'would-wait'
      ? PlanExit.refused
      : v === 'bad-input'
        ? PlanExit.badInput
        : PlanExit.unknown;

function weighPlans(plans: readonly Plan[], config: Config, f: Findings): void {
  const mode = config.evacuation.capacityCheck;
  for (const p of plans) {
    // plan-wide (missing rights): refused whatever the drain policy, as the evacuation does
    for (const b of p.blockers ?? []) f.reasons.push(`EvacuationBlocked: ${b.message}`);
    // a workload a plan-wide blocker names already (a typo in its policy) is not named again
    const named = (w: PlannedWorkload) =>
      (p.blockers ?? []).some((b) => b.message.includes(w.name) && b.message.includes(w.blocker ?? '\0'));
    for (const w of p.workloads.filter((x) => x.action === 'none' && !named(x))) {
      const text = `${p.plugin}: ${w.name} cannot move (${w.blocker ?? 'blocked'})`;
      if (config.drain.requirePluginsSucceeded) f.reasons.push(text);
      else f.notes.push(`${text}; it stays and the drain goes on (drain.requirePluginsSucceeded false)`);
    }
    const c = p.capacity;
    if (!c || c.status === 'fits' || mode === 'off') continue;
    // the verdict's message starts with the plugin's name already
    const text = `${c.status === 'short' ? 'InsufficientCapacity' : 'capacity unknown'}: ${c.message}`;
    if (mode === 'warn' || (c.status === 'unknown' && c.reason === 'unsupported')) f.notes.push(text);
    else if (c.status === 'short') f.reasons.push(text);
    else f.unknown.push(text);
  }
  if (mode === 'off') f.notes.push('capacity not checked (evacuation.capacityCheck off)');
}

function weighPods(pods: DrainPreview, f: Findings): void {
  for (const r of pods.refused) f.reasons.push(`drain: ${r.pod}: ${r.reason}`);
  for (const h of pods.held) f.notes.push(`drain would wait: ${h.pod}: ${h.budget}`);
}

/** virt-launcher pods move with their VMI: the KubeVirt plugin takes care of them, not the drain. */
const launcherSkip = (config: Config) => (pod: { metadata: { labels?: Record<string, string> } }) =>
  config.kubevirt.enabled && pod.metadata.labels?.['kubevirt.io'] === 'virt-launcher'
    ? 'handled by the kubevirt plugin'
    : undefined;

async function checkNode(k: KubeClients, i: PreflightInput, f: Findings): Promise<NodeObject | undefined> {
  try {
    const node = await getNode(k, i.node, i.signal);
    const out = optOutReason(node);
    if (out) f.reasons.push(`node ${i.node} ${out}: drainer never evacuates it`);
    const mode = migrationMode(node);
    if ('invalid' in mode) f.reasons.push(`EvacuationBlocked: ${mode.invalid}`);
    else if (mode.mode === 'manual')
      f.notes.push(
        `node ${i.node} has ${MIGRATION_MODE_KEY}=manual: drainer disables the compute service and moves nothing; the evacuation (and the drain gate) waits until someone else has emptied the host`,
      );
    const rec = parseRecord(node.metadata.annotations?.[STATE_ANNOTATION]);
    if (rec) f.notes.push(`node ${i.node} already has a record: phase ${rec.phase} (trigger ${rec.trigger})`);
    return node;
  } catch (err) {
    if (isNotFoundError(err)) f.badInput.push(`node ${i.node} does not exist in the cluster`);
    else f.failed('node', err);
    return undefined;
  }
}

/** The node could not be read (or does not exist): nothing else is worth asking. */
function unanswered(node: string, f: Findings): PreflightReport {
  const base = { node, verdict: f.verdict(), unknown: f.unknown, invalid: f.badInput };
  return { ...base, reasons: f.reasons, waits: f.waits, notes: f.notes, plans: [], errors: [] };
}

function weighStart(gate: GateCheck | undefined, start: StartCheck | undefined, f: Findings): void {
  if (gate?.refuse) f.reasons.push(`drain gate: ${gate.refuse}`);
  if (gate?.note) f.notes.push(`drain gate: ${gate.note}`);
  if (start?.wait) f.waits.push(start.wait.reason);
  if (start?.note) f.notes.push(`start: ${start.note}`);
}

/** Where the node would stand in the fleet queue. */
const fleetPlace = (k: KubeClients, i: PreflightInput, now: Date): Promise<FleetPreview> =>
  previewFleet({
    api: kubeFleetApi({
      k,
      namespace: i.config.fleet.namespace,
      daemonSet: i.config.fleet.daemonSet,
      log: i.log,
    }),
    budget: i.config.fleet.maxConcurrentEvacuations,
    node: i.node,
    now,
  });

/** Windows, freezes and blockers, unless the caller starts now (run-once) or has no cluster. */
const startCheck = async (
  k: KubeClients | undefined,
  i: PreflightInput,
  nodeObject: NodeObject | undefined,
  now: Date,
): Promise<StartCheck | undefined> =>
  k && i.startGate !== false
    ? checkStart({ k, config: i.config, node: i.node, nodeObject, now, signal: i.signal })
    : undefined;

export async function preflight(i: PreflightInput): Promise<PreflightReport> {
  const f = new Findings();
  const { config, kube: k } = i;
  const now = i.now ?? (() => new Date());
  const capacity = config.evacuation.capacityCheck !== 'off';
  const drains = config.drain.enabled && !config.dryRun;
  // the Node first: a cluster that cannot be read answers every other check the same way
  const nodeObject = k ? await checkNode(k, i, f) : undefined;
  if (f.unknown.length || f.badInput.length) return unanswered(i.node, f);
  const [results, pods, fleet, gate, start] = await Promise.all([
    i.host.planAll(k ? nodeRef(i.node, nodeObject) : (i.declared ?? { name: i.node }), i.signal, {
      capacity,
    }),
    k && drains
      ? previewDrain(k, {
          node: i.node,
          config: config.drain,
          skipPod: launcherSkip(config),
          signal: i.signal,
        }).catch((err: unknown) => void f.failed('drain', err))
      : undefined,
    k ? fleetPlace(k, i, now()).catch((err: unknown) => void f.failed('fleet', err)) : undefined,
    // the gate never decides the verdict, so neither does a gate that cannot be read (no rights to
    // drainer's namespace): a note
    i.gate?.(i.node, i.signal).catch((err: unknown) => {
      f.notes.push(`drain gate: not read (${messageOf(err)})`);
      return undefined;
    }),
    // run-once is an operator's "now": only plan weighs windows, freezes and blockers
    startCheck(k, i, nodeObject, now()).catch((err: unknown) => void f.failed('start gate', err)),
  ]);
  for (const r of results) if (r.error !== undefined) f.failed(r.plugin, r.error);
  const plans = results.flatMap((r) => (r.plan ? [r.plan] : []));
  weighPlans(plans, config, f);
  if (pods) weighPods(pods, f);
  weighStart(gate, start, f);
  if (!k) f.notes.push('no Kubernetes access configured: KubeVirt, the pod drain and the fleet not checked');
  else if (!drains) f.notes.push('the pod drain is off (drain.enabled false or a dry run)');
  return {
    node: i.node,
    verdict: f.verdict(),
    reasons: f.reasons,
    waits: f.waits,
    unknown: f.unknown,
    invalid: f.badInput,
    notes: f.notes,
    plans,
    errors: results.flatMap((r) =>
      r.error !== undefined ? [{ plugin: r.plugin, message: messageOf(r.error) }] : [],
    ),
    ...(pods ? { pods } : {}),
    ...(fleet ? { fleet } : {}),
    ...(gate ? { gate } : {}),
    ...(start ? { start } : {}),
  };
}
