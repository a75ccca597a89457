// One soak: the fleet comes up, each step of the schedule runs and the invariants are checked after
// it, then the faults end, every node gets a live agent, the fleet is given a bounded time to settle
// and everything is checked once more. The seed fixes the schedule (Nova's fault RNG has a fixed
// seed of its own); the interleaving with the agents' timers is real time and may differ between runs.
import { Machines } from './machines.ts';
import { writeFileSync } from 'node:fs';
import { gateName } from '../../src/kube/gate.ts';
import { Checker, type Finding } from './check.ts';
import { drainerCli } from './cli.ts';
import { DRAIN_KINDS, Drains, onHost, refusedByPlan, type DrainKind, type DrainReturn } from './drains.ts';
import { runStep } from './faults.ts';
import { FLEET_NODES, REBOOT_NODES, SCALE, serverWays, startFleet, type Fleet } from './fleet.ts';
import { GateWatch } from './gate-watch.ts';
import { enableAgent } from './lifecycle-steps.ts';
import { Maintenances } from './maintenances.ts';
import { kubeletRegistration, Operator } from './operator.ts';
import { OWNER_ACTIONS, Owners, type OwnerActionKind, type OwnerOutcome } from './owners.ts';
import { prng } from './prng.ts';
import { QueueWatch } from './queue-watch.ts';
import { countByKind, describeStep, type Step, type StepKind } from './schedule.ts';

/** At most this many drain cycles run at once (the fleet budget evacuates 2 nodes at a time). */
export const MAX_DRAINS = 5;
/**
 * A round lasts at least this long (real ms): a drain cycle takes 3 to 10 s to return (kubectl
 * retries a refused eviction every 5 s) and a few more to come back, so each round's drain has rounds
 * to finish in. At 1.2 s a lightly loaded machine judged 83 drains in 200 rounds; at 1.8 s, over 100.
 */
export const ROUND_MS = 1800;
/**
 * A round that names a drain waits at most this long (real ms) for a node to run it on: a free drain
 * cycle and a node with VMs not draining. Without it the count of drains judged followed the machine's
 * load (65 to 153 in 200 rounds on the same seeds): a loaded machine's drains run longer, so more
 * rounds found every node with VMs busy and started none.
 */
export const TARGET_WAIT_MS = 8000;

export interface SoakOptions {
  readonly seed: number;
  readonly steps: readonly Step[];
  /** Real ms between a step and the check after it. */
  readonly gapMs?: number;
  /** Real ms a round lasts at least (ROUND_MS). */
  readonly roundMs?: number;
  /** Real ms a round waits for a node its drain can run on (TARGET_WAIT_MS). */
  readonly targetWaitMs?: number;
  /** Real ms a healing invariant may stay broken before it counts. */
  readonly graceMs?: number;
  /** Real ms the fleet is given to settle at the end. */
  readonly settleMs?: number;
  /** Write the agents' log lines here at the end (to find a violation's cause). */
  readonly logFile?: string;
  /** Stop at the first round with a finding (the shrinker's runs). */
  readonly stopAtFirst?: boolean;
  readonly onRound?: (round: number, step: Step, found: readonly Finding[]) => void;
}

export interface SoakResult {
  readonly seed: number;
  /** The steps that ran (all of them, or up to the first failing one with stopAtFirst). */
  readonly ran: readonly Step[];
  readonly injected: Record<StepKind, number>;
  /** Steps that found nothing to act on (a drain of the node already running). */
  readonly skipped: number;
  readonly findings: readonly Finding[];
  /** The first round with a finding (1-based), if any. */
  readonly firstFailingRound?: number;
  readonly roundsMs: number;
  readonly settleMs: number;
  readonly settled: boolean;
  readonly endState: Checker['endState'];
  /** The drains: which tool ran the kubectl kinds, how many of each kind started, and every return. */
  readonly drains: { tool: string; started: Record<DrainKind, number>; returns: readonly DrainReturn[] };
  /** The owners' actions, each with Nova's answer (none: nothing to act on). */
  readonly owners: readonly OwnerOutcome[];
  /** How many maintenances (records) began. */
  readonly maintenances: number;
}

/**
 * Which nodes a kind of drain is run on: kured reboots the nodes whose maintenance is a declared
 * reboot; Karpenter and Cluster API replace machines, which no one declares a reboot; kubectl any.
 */
export function drainable(kind: DrainKind, node: string): boolean {
  if (kind === 'kured') return REBOOT_NODES.includes(node);
  if (kind === 'karpenter' || kind === 'capi') return !REBOOT_NODES.includes(node);
  return true;
}

/**
 * The node the round drains: one this kind runs on, with VMs on it and no drain cycle of its own,
 * picked with r. Three rounds in four leave out the nodes drainer's plan would refuse (as an operator
 * who ran `drainer plan` first): a drain of one can only give up, holding a drain cycle for its whole
 * timeout; the fourth keeps such drains in the soak (the gate must hold them all the same).
 */
export function drainTarget(
  fleet: Fleet,
  drains: Pick<Drains, 'busy'>,
  kind: DrainKind,
  r: ReturnType<typeof prng>,
): string | undefined {
  const withVms = FLEET_NODES.filter(
    (n) => drainable(kind, n) && !drains.busy(n) && onHost(fleet, n).occupying.length > 0,
  );
  const planned = withVms.filter((n) => !refusedByPlan(fleet, n));
  const pool = planned.length && r.chance(0.75) ? planned : withVms;
  return pool.length ? r.pick(pool) : undefined;
}

/** Rounds a node stays one drainer's plan refuses before the operator has its owners pick another way out. */
export const BLOCKED_ROUNDS = 10;

/**
 * Nodes drainer's plan has refused for BLOCKED_ROUNDS rounds running: their owners are asked (as the
 * EvacuationBlocked Event tells the operator to), else such a node takes every server the others'
 * evacuations send it (it is never emptied) and the fleet's drains have little left to judge.
 */
export class Blocked {
  readonly #since = new Map<string, number>();

  /** The nodes due for their owners this round. */
  due(round: number, refused: (node: string) => boolean): string[] {
    const due: string[] = [];
    for (const node of FLEET_NODES) {
      if (!refused(node)) this.#since.delete(node);
      else if (!this.#since.has(node)) this.#since.set(node, round);
      else if (round - this.#since.get(node)! >= BLOCKED_ROUNDS) {
        this.#since.delete(node);
        due.push(node);
      }
    }
    return due;
  }
}

/** The round's drain target once there is one (drainTarget), waiting at most ms; undefined if none came. */
export async function awaitTarget(
  fleet: Fleet,
  drains: Pick<Drains, 'busy' | 'running'>,
  kind: DrainKind,
  r: ReturnType<typeof prng>,
  ms: number,
): Promise<string | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const node = drains.running < MAX_DRAINS ? drainTarget(fleet, drains, kind, r) : undefined;
    if (node || Date.now() >= end) return node;
    await sleep(100);
  }
}

/** The round's drain, of the kind its step names, on a node found within waitMs (none found: none). */
async function startDrain(
  fleet: Fleet,
  drains: Drains,
  step: Step,
  round: number,
  r: ReturnType<typeof prng>,
  waitMs: number,
): Promise<void> {
  if (!step.drain) return;
  const node = await awaitTarget(fleet, drains, step.drain, r, waitMs);
  if (node) drains.start(node, step.drain, round);
}

/** The fleet's maintenances, from its API server's Node changes, on its clock. */
export const maintenancesOf = (fleet: Fleet): Maintenances =>
  new Maintenances({
    subscribe: (res, cb) => fleet.sandbox.kube.store.subscribe(res, cb),
    now: () => fleet.sandbox.clock.now(),
  });

/** The round's own draws, the same for the same seed and round whatever steps ran before it. */
export const roundPrng = (seed: number, round: number) => prng((seed * 1_000_003 + round) >>> 0);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long a settled fleet must stay settled: an uncordon's restore writes its first record at once. */
export const STABLE_MS = 2000;

/**
 * True only if the check holds now and again `ms` later: a node that looked settled while the drain
 * cycle that uncordoned it had just ended (its restore not yet begun) is not taken for settled.
 */
export async function stablyTrue(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  if (!(await check())) return false;
  await sleep(ms);
  return check();
}

async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await sleep(250);
  }
  return false;
}

/** The node's gate pod is Running and Ready on it, and its PDB is there. */
function gateUp(fleet: Fleet, node: string): boolean {
  const store = fleet.sandbox.kube.store;
  const ns = fleet.config.fleet.namespace;
  const pod = store.find('pods', ns, gateName(node));
  const status = pod?.status as
    { phase?: string; conditions?: { type: string; status: string }[] } | undefined;
  const ready = status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  return (
    status?.phase === 'Running' && ready && !!store.find('poddisruptionbudgets.policy', ns, gateName(node))
  );
}

export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const fleet = await startFleet();
  const maintenances = maintenancesOf(fleet);
  // each gate as the API server shows it: a release's excuse lasts until the gate holds again
  const gates = new GateWatch(
    {
      subscribe: (res, cb) => fleet.sandbox.kube.store.subscribe(res, cb),
      now: () => fleet.sandbox.clock.now(),
    },
    { namespace: fleet.config.fleet.namespace, nodes: FLEET_NODES },
  );
  const operator = new Operator(
    fleet.sandbox.kube.url,
    fleet.config.fleet.namespace,
    kubeletRegistration(fleet.sandbox.scenario),
  );
  // Cluster API's Machines, one per node: the agents hold their pre-drain hook on them
  const machines = new Machines(fleet.k);
  await machines.install(FLEET_NODES);
  const drains = new Drains(fleet, operator, maintenances, machines);
  const owners = new Owners(fleet, maintenances, serverWays());
  const cli = drainerCli(fleet);
  // the queue on the API server's clock, which runs SCALE times the agents' (their leaseDuration is real seconds)
  const queue = new QueueWatch(
    {
      subscribe: (res, cb) => fleet.sandbox.kube.store.subscribe(res, cb),
      now: () => fleet.sandbox.clock.now(),
    },
    // the agents' places are the API server's Date header (real time): a second of it is SCALE of ours
    { staleMs: fleet.config.fleet.leaseDuration * 1000 * SCALE, resolutionMs: 1000 * SCALE },
  );
  try {
    for (const node of FLEET_NODES) await fleet.startAgent(node);
    const checker = new Checker(fleet, drains, {
      graceMs: o.graceMs ?? 20_000,
      gates,
      observations: () => ({
        releases: maintenances.releases,
        ownerActions: owners.actions,
        powerChanges: owners.powerChanges,
        queue: queue.queue,
      }),
    });
    // every agent holds its gate before the first fault (the invariants ask nothing of a node whose
    // agent has not yet taken its Lease, so they alone would let a drain in before its gate exists)
    await until(
      async () =>
        FLEET_NODES.every((n) => gateUp(fleet, n)) &&
        (await checker.check(0)).length === 0 &&
        (await checker.settled()),
      30_000,
    );
    const started = Date.now();
    const ran: Step[] = [];
    const injected: Step[] = [];
    let skipped = 0;
    let firstFailingRound: number | undefined;
    const blocked = new Blocked();
    for (const [i, step] of o.steps.entries()) {
      const roundStart = Date.now();
      const r = roundPrng(o.seed, i + 1);
      for (const node of blocked.due(i + 1, (n) => refusedByPlan(fleet, n))) await owners.unblock(node);
      await startDrain(fleet, drains, step, i + 1, r, o.targetWaitMs ?? TARGET_WAIT_MS);
      const ctx = { fleet, operator, drains, maintenances, cli, owners, r, round: i + 1 };
      if (await runStep(step, ctx)) injected.push(step);
      else skipped++;
      ran.push(step);
      await sleep(Math.max(o.gapMs ?? 250, (o.roundMs ?? ROUND_MS) - (Date.now() - roundStart)));
      const found = await checker.check(i + 1);
      o.onRound?.(i + 1, step, found);
      if (found.length && firstFailingRound === undefined) firstFailingRound = i + 1;
      if (found.length && o.stopAtFirst) break;
    }
    const roundsMs = Date.now() - started;
    const settleStart = Date.now();
    let settled = false;
    if (!(o.stopAtFirst && firstFailingRound !== undefined)) {
      const nova = fleet.sandbox.openstack.faults;
      nova.errorRate = 0;
      nova.latencyMs = 0;
      // every agent back: the ones the operator took off by label too
      for (const node of [...fleet.disabled]) await enableAgent({ fleet, operator }, node);
      for (const node of FLEET_NODES) if (!fleet.agents.get(node)?.length) await fleet.startAgent(node);
      const settleMs = o.settleMs ?? 60_000;
      await drains.settle(settleMs);
      settled = await until(
        () => stablyTrue(() => checker.settled(), STABLE_MS),
        Math.max(0, settleMs - (Date.now() - settleStart)),
      );
      const found = await checker.check(ran.length, true);
      if (found.length && firstFailingRound === undefined) firstFailingRound = ran.length;
    }
    return {
      seed: o.seed,
      ran,
      injected: countByKind(injected),
      skipped,
      findings: checker.findings,
      ...(firstFailingRound !== undefined ? { firstFailingRound } : {}),
      roundsMs,
      settleMs: Date.now() - settleStart,
      settled,
      endState: checker.endState,
      drains: { tool: drains.tool, started: { ...drains.started }, returns: [...drains.returns] },
      owners: [...owners.outcomes],
      maintenances: maintenances.count,
    };
  } finally {
    await drains.settle(0);
    if (o.logFile) writeFileSync(o.logFile, fleet.logLines.join(''));
    owners.close();
    queue.close();
    gates.close();
    maintenances.close();
    await fleet.close();
  }
}

/** A finding as one line. */
export const describeFinding = (f: Finding): string =>
  `[${f.id}] ${f.object}: ${f.evidence} (${f.atEnd ? 'at the end' : f.round ? `after round ${f.round}` : 'before the first round'})`;

export { describeStep, DRAIN_KINDS, OWNER_ACTIONS, type OwnerActionKind };
