// The invariants, checked after every step of the soak. Two kinds: a safety promise (nothing
// evicted the gate of an occupied node, no false report, the budget) is broken the moment it is
// seen; a state that heals (a gate being re-created, a NodeMaintenance status not yet written, a
// Lease of a killed agent) is counted only when it outlives a grace period, and at the end, after
// the fleet was given time to settle, it must be gone.
import { overruledUnderHook } from '../../src/invariants/rules/capi-overruled.ts';
import {
  checkInvariants,
  checkOptionsOf,
  OPERATOR_FINDINGS,
  type CheckOptions,
  type Violation,
} from '../../src/invariants/index.ts';
import { isGatePodName } from '../../src/kube/gate.ts';
import type {
  ObservedOwnerAction,
  ObservedPowerChange,
  ObservedRelease,
  ObservedRequest,
  Observations,
  World,
} from '../../src/invariants/world.ts';
import { readSandboxWorld } from '../../src/sandbox/world.ts';
import { recordOf } from '../../src/invariants/hosts.ts';
import { changedByUs, type NodeRecord } from '../../src/core/record/record.ts';
import { DRAIN_KIND_TEXT, onHost, vmsOn, type DrainReturn, type Drains } from './drains.ts';
import { SCALE, type Fleet } from './fleet.ts';
import type { GateWatch } from './gate-watch.ts';
import { CHAOS_USER_AGENT } from './operator.ts';

const DRAIN_RETURNED_OCCUPIED_ID = 'drain-returned-occupied';

/**
 * An operator's finding about a node whose agent the operator took off on purpose
 * (drainer.dev/agent=disabled): a record nobody acts on, VMs nobody moves. Known to the operator who
 * did it; drainer broke no promise (the ones it must keep still count: gate-without-keeper where the
 * agent was taken off with nothing on the node, so its stop should have dropped the gate).
 */
export const operatorsOwnDoing = (
  v: Pick<Violation, 'id' | 'object' | 'node'>,
  disabled: ReadonlySet<string>,
  /**
   * Nodes whose agent was taken off with VMs on them: it rightly kept the gate, and once they left
   * (moves already under way, their owners) doctor names it and release opens it, as after any stop.
   */
  offWithVms: ReadonlySet<string> = new Set(),
  /**
   * Nodes whose gate pod or PDB the operator deleted while their agent was off: no agent makes a spare
   * or a new PDB there (agent-off.ts gateDeletedWithoutAgent).
   */
  gateDeletedOff: ReadonlySet<string> = new Set(),
): boolean =>
  (v.id === 'gate-without-keeper' && aboutGateOf(v, offWithVms)) ||
  (GATE_HOLDS.has(v.id) && aboutGateOf(v, gateDeletedOff)) ||
  (OPERATOR_FINDINGS.has(v.id) &&
    (aboutGateOf(v, disabled) || [...disabled].some((n) => v.object === `node/${n}` || v.node === n)));
/** Is the finding about the gate of one of these nodes (its pod, a spare pod, its PDB)? */
const aboutGateOf = (v: Pick<Violation, 'object'>, nodes: ReadonlySet<string>): boolean =>
  [...nodes].some((n) => isGatePodName(n, v.object.slice(v.object.lastIndexOf('/') + 1)));
const GATE_POD_PATH = /\/pods\/drainer-gate-/;
/** A gate drainer says is held is there and holds (rules/gate-held.ts). */
const GATE_HOLDS: ReadonlySet<string> = new Set(['gate-missing', 'gate-not-holding']);

/** Broken once seen. Every other invariant id heals and is judged after a grace period. */
export const SAFETY: ReadonlySet<string> = new Set<string>([
  'gate-disrupted-while-occupied',
  'migration-succeeded-unconfirmed',
  'moved-count-exceeds-nova',
  'migration-failed-but-moved',
  'failure-for-completed-move',
  'unexpected-4xx',
  'budget-exceeded',
  'owner-stop-undone',
  'owner-action-reported-as-failure',
  DRAIN_RETURNED_OCCUPIED_ID,
  'drain-overruled-under-hook',
]);

/**
 * A drain return the promise is about: it returned success, nobody put the node back in service
 * while it ran, no operator released the node's gate in this maintenance, and the operator had not
 * taken the node's agent off with nothing on it (drains.ts agentTakenOffEmpty).
 */
export const judged = (d: DrainReturn): boolean => d.ok && !d.contradicted && !d.released && !d.agentOff;

/**
 * Real ms an operator's release still excuses a drain's return after its maintenance ended, unless
 * the node's gate is seen holding again sooner. A maintenance that ends with its Node deleted and
 * registered again leaves the new Node with no gate until its agent sees the Node, makes the gate
 * and the kubelet runs its pod (a real kubelet takes 3-5 s, design.md section 5): a drain that
 * starts in that moment goes through the opening the operator's forced release made (chaos seed 3
 * round 37: Karpenter's drain of hv-1 about a second after it registered again). A restore holds
 * the gate before its record goes, so that end excuses nothing more. A gate that does not hold
 * again within this is drainer's to answer for. An agent the operator put back on a node it had
 * taken off empty gets the same moment (withAgentBack).
 */
export const REARM_MS = 3000;

/**
 * When the excuse of a node left without a gate at `end` lapses (the sandbox's clock): a release
 * whose maintenance ended, an agent the operator put back on an empty node.
 */
export type ReleaseLapse = (node: string, end: number) => number;

/** The lapse: the first moment the gate held again since `end`, at most `boundMs` after it. */
export const lapseAtRearm =
  (gates: Pick<GateWatch, 'heldFrom'>, boundMs: number): ReleaseLapse =>
  (node, end) =>
    Math.min(gates.heldFrom(node, end) ?? Infinity, end + boundMs);

/**
 * The return as released when an operator's release of its node was under way at that moment: the
 * release opens the gate while its command runs, and the soak records it only once the command
 * ended (a drain that went on through the opened gate returned in between). Its excuse lapses as
 * `lapse` says after its maintenance ended (by default, at that end).
 */
export const withReleases = (
  d: DrainReturn,
  releases: readonly ObservedRelease[],
  lapse: ReleaseLapse = (_node, end) => end,
): DrainReturn =>
  !d.released &&
  releases.some(
    (r) =>
      r.node === d.node &&
      r.from <= d.returnedAt &&
      d.returnedAt <= (r.until === undefined ? Infinity : lapse(r.node, r.until)),
  )
    ? { ...d, released: true }
    : d;

/**
 * The return as the operator's when it came before the gate of an agent the operator had taken off an
 * empty node, and then put back, held again: until then the node had no gate, by the operator's
 * choice (chaos seed 4 round 178: Karpenter's drain of a node whose agent came back 0.1 s before it
 * returned). The excuse lapses as `lapse` says after the agent came back (by default, at once).
 */
export const withAgentBack = (d: DrainReturn, lapse: ReleaseLapse = (_node, back) => back): DrainReturn =>
  !d.agentOff && d.agentBackAt !== undefined && d.returnedAt <= lapse(d.node, d.agentBackAt)
    ? { ...d, agentOff: true }
    : d;

/**
 * The servers on the host at a drain's return that their owner started (a start on a disabled host is
 * the owner's to make): while the drain ran, or so shortly before it that no agent could have seen it
 * (an agent looks at an evacuated host's servers once a resync, then stops or moves a started one
 * again and holds the gate meanwhile). One started earlier and still there is drainer's to have seen.
 * noticeMs on the sandbox's clock, as the changes and the drain's times are.
 */
export function ownerStarted(
  d: Pick<DrainReturn, 'startedAt' | 'returnedAt'>,
  changes: readonly ObservedPowerChange[],
  noticeMs: number,
): Set<string> {
  return new Set(
    changes
      .filter(
        (c) =>
          c.by === 'owner' && c.to === 'running' && c.at >= d.startedAt - noticeMs && c.at <= d.returnedAt,
      )
      .map((c) => `server ${c.name}`),
  );
}

/**
 * The servers on a declared reboot's host at a drain's return whose guest is off while a resize runs
 * on them that their owner asked for, while the drain ran or within an agent's notice before it (chaos
 * seed 424242 round 4: the owner resized a server drainer had stopped for the reboot). Nova keeps a
 * stopped server stopped through a resize: the owner's resize neither starts the guest nor is
 * drainer's doing. Without such an ask the resize is drainer's cold migration, which must end first.
 */
export function ownerResizedOff(
  d: Pick<DrainReturn, 'startedAt' | 'returnedAt' | 'onHost'>,
  actions: readonly ObservedOwnerAction[],
  noticeMs: number,
): Set<string> {
  const off = d.onHost.offInResize ?? {};
  return new Set(
    actions
      .filter(
        (a) =>
          a.action === 'resize' && a.name in off && a.at >= d.startedAt - noticeMs && a.at <= d.returnedAt,
      )
      .map((a) => off[a.name]!),
  );
}

/** The soak's own findings on top of the invariants of src/invariants. */
export const DRAIN_RETURNED_OCCUPIED = DRAIN_RETURNED_OCCUPIED_ID;
export const NOT_SETTLED = 'not-settled';

export interface Finding {
  readonly id: string;
  readonly object: string;
  readonly evidence: string;
  /** The round after which it was seen (0: before the first). */
  readonly round: number;
  /** Seen in the check after the fleet settled. */
  readonly atEnd?: boolean;
}

/**
 * One key per broken promise: an unexpected 4xx once per path, a false report once per Event (its
 * evidence names where the server is now, which changes), a healing state once per object.
 */
function keyOf(v: Pick<Violation, 'id' | 'object' | 'evidence'>, persistent: boolean): string {
  if (v.id === 'unexpected-4xx' || persistent) return `${v.id} ${v.object}`;
  const event = /^Event \w+ "([^"]*)"/.exec(v.evidence)?.[1];
  return `${v.id} ${v.object} ${event ?? v.evidence}`;
}

export class Checker {
  readonly #fleet: Fleet;
  readonly #drains: Drains;
  readonly #opts: CheckOptions;
  readonly #graceMs: number;
  /** An agent's resync and a second more, on the sandbox's clock: how long a started server goes unseen. */
  readonly #noticeMs: number;
  readonly #more: () => Partial<Observations>;
  /** When a release's excuse lapses after its maintenance ended, or an agent put back's after it came (the gate held again, or REARM_MS). */
  readonly #lapse: ReleaseLapse | undefined;
  readonly #counted = new Set<string>();
  readonly #since = new Map<string, number>();
  #lastRequest: ObservedRequest | undefined;
  #logAt = 0;
  #drainAt = 0;
  readonly findings: Finding[] = [];
  /** Each node as the final check saw it: its record's phase (InService without one), what is left on it. */
  endState: { node: string; phase: string; unschedulable: boolean; left: number }[] = [];

  constructor(
    fleet: Fleet,
    drains: Drains,
    o: {
      graceMs: number;
      observations?: () => Partial<Observations>;
      /** Each node's gate as the API server showed it (without: a release's excuse ends with its maintenance). */
      gates?: Pick<GateWatch, 'heldFrom'>;
    },
  ) {
    this.#fleet = fleet;
    this.#drains = drains;
    this.#graceMs = o.graceMs;
    this.#noticeMs = (fleet.config.resyncInterval + 1) * 1000 * SCALE;
    this.#more = o.observations ?? (() => ({}));
    this.#lapse = o.gates ? lapseAtRearm(o.gates, REARM_MS * SCALE) : undefined;
    // the soak skews agents' clocks by up to 60 s: judging their renewTime needs that much slack
    this.#opts = checkOptionsOf(fleet.config, fleet.sandbox.scenario.nodes.length, { clockSlackSeconds: 61 });
  }

  /** The world now, with only what was observed since the last look (requests, log lines), the soak's own requests left out. */
  async #world(consume = true): Promise<World> {
    let err: unknown;
    for (let i = 0; i < 20; i++) {
      try {
        const w = await readSandboxWorld(this.#fleet.sandbox, this.#fleet.k, {
          namespace: this.#opts.namespace,
        });
        if (!consume) return { ...w, observations: this.#more() };
        const all = w.observations?.requests ?? [];
        const from = this.#lastRequest ? all.lastIndexOf(this.#lastRequest) + 1 : 0;
        this.#lastRequest = all.at(-1) ?? this.#lastRequest;
        const requests = all.slice(from).filter((r) => r.userAgent !== CHAOS_USER_AGENT);
        this.#logGateRequests(requests);
        const logLines = this.#fleet.logLines.slice(this.#logAt);
        this.#logAt += logLines.length;
        return { ...w, observations: { ...this.#more(), requests, logLines } };
      } catch (e) {
        err = e; // an injected API fault or restart: it ends within its step
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    throw err;
  }

  /**
   * drainer's changes to gate pods go into the agents' log (--log) at their real time, so the log
   * line of the agent that made one can be found beside it (the API server stamps them on its own,
   * faster clock).
   */
  #logGateRequests(requests: readonly ObservedRequest[]): void {
    const wall = (at: number) => new Date(this.#fleet.sandbox.clock.wallOf(at)).toISOString();
    for (const r of requests)
      if (r.method !== 'GET' && GATE_POD_PATH.test(r.path))
        this.#fleet.logLines.push(
          `${JSON.stringify({ time: wall(r.at), msg: 'api server: gate pod request', method: r.method, path: r.path, status: r.status, ...(r.removed ? { removed: true } : {}), ...(r.heldBy ? { heldBy: r.heldBy } : {}) })}\n`,
        );
  }

  #note(f: Finding): void {
    this.findings.push(f);
    this.#fleet.logLines.push(
      `${JSON.stringify({ time: new Date().toISOString(), msg: 'soak finding', id: f.id, object: f.object, evidence: f.evidence, round: f.round })}\n`,
    );
  }

  #drainReturns(round: number): void {
    const { powerChanges: changes = [], releases = [], ownerActions = [] } = this.#more();
    const returns = this.#drains.returns;
    for (let i = this.#drainAt; i < returns.length; i++) {
      const d = withAgentBack(withReleases(returns[i]!, releases, this.#lapse), this.#lapse);
      returns[i] = d; // the report counts it as released (or the operator's) too
      // a server its owner started while the drain ran, or just before, is the owner's; one made
      // before the gate went is judged by gate-disrupted-while-occupied
      const owners = new Set([
        ...ownerStarted(d, changes, this.#noticeMs),
        ...ownerResizedOff(d, ownerActions, this.#noticeMs),
      ]);
      const occupying = d.onHost.occupying.filter((vm) => !owners.has(vm));
      // Cluster API gave up although drainer's hook held its Machine (rules/capi-overruled.ts)
      const overruled = d.kind === 'capi' ? overruledUnderHook({ ...d, occupying }) : undefined;
      if (overruled) this.#note({ ...overruled, round });
      if (judged(d) && occupying.length)
        this.#note({
          id: DRAIN_RETURNED_OCCUPIED,
          object: `node/${d.node}`,
          evidence: `${DRAIN_KIND_TEXT[d.kind]} of ${d.node} (started in round ${d.round}) returned success while on the node: ${occupying.join(', ')}`,
          round,
        });
    }
    this.#drainAt = this.#drains.returns.length;
  }

  /** Checks after a step; returns what it found broken in this round. */
  async check(round: number, final = false): Promise<Finding[]> {
    const before = this.findings.length;
    this.#drainReturns(round);
    const world = await this.#world();
    const now = Date.now();
    const seen = new Set<string>();
    for (const v of checkInvariants(world, this.#opts)) {
      if (operatorsOwnDoing(v, this.#fleet.disabled, this.#fleet.offWithVms, this.#fleet.gateDeletedOff))
        continue;
      const persistent = !SAFETY.has(v.id);
      const key = keyOf(v, persistent);
      seen.add(key);
      if (this.#counted.has(key)) continue;
      if (persistent) {
        const since = this.#since.get(key) ?? now;
        this.#since.set(key, since);
        if (!final && now - since < this.#graceMs) continue;
      }
      this.#counted.add(key);
      this.#note({
        id: v.id,
        object: v.object,
        evidence: v.evidence,
        round,
        ...(final ? { atEnd: true } : {}),
      });
    }
    for (const key of this.#since.keys()) if (!seen.has(key)) this.#since.delete(key);
    if (final) {
      for (const f of unsettled(this.#fleet, world)) this.#note({ ...f, round, atEnd: true });
      this.endState = world.nodes.map((n) => ({
        node: n.name,
        phase: n.record.kind === 'absent' ? 'InService' : (recordOf(n)?.phase ?? 'unreadable'),
        unschedulable: n.unschedulable,
        left: vmsOn(this.#fleet, n.name).length,
      }));
    }
    return this.findings.slice(before);
  }

  /** Are all nodes settled and nothing that heals still broken? (The settle loop polls this.) */
  async settled(): Promise<boolean> {
    const world = await this.#world(false).catch(() => undefined);
    if (!world) return false;
    const healing = checkInvariants(world, this.#opts).filter(
      (v) =>
        !SAFETY.has(v.id) &&
        !operatorsOwnDoing(v, this.#fleet.disabled, this.#fleet.offWithVms, this.#fleet.gateDeletedOff),
    );
    return healing.length === 0 && unsettled(this.#fleet, world).length === 0;
  }
}

/**
 * A maintenance refused before any change for a workload that must move and cannot (a server whose
 * owner's way out is `stop` on a node whose maintenance is no declared reboot, which an owner's
 * resize can put anywhere): the node is as it was, its VMs and its held gate on it, and waits for
 * the owner or an operator. That is the promise kept ("safe by default"), and as settled as it gets.
 */
export const refusedUnchanged = (rec: NodeRecord | undefined): boolean =>
  rec?.phase === 'Failed' && rec.failureReason === 'EvacuationBlocked' && !changedByUs(rec);

/**
 * At the end every node is back in service (no record), Evacuated with no guest running on it, or
 * refused before any change (refusedUnchanged).
 */
function unsettled(fleet: Fleet, world: World): Omit<Finding, 'round'>[] {
  const out: Omit<Finding, 'round'>[] = [];
  for (const name of fleet.sandbox.scenario.nodes.map((n) => n.name)) {
    const n = world.nodes.find((x) => x.name === name);
    if (!n) {
      out.push({ id: NOT_SETTLED, object: `node/${name}`, evidence: 'the Node does not exist' });
      continue;
    }
    if (n.record.kind === 'absent') continue;
    const rec = recordOf(n);
    const phase = rec?.phase ?? 'unreadable';
    const left = vmsOn(fleet, name);
    // a server stopped for a declared reboot stays on its host by design, as does a VMI that ended
    if (phase === 'Evacuated' && onHost(fleet, name).occupying.length === 0) continue;
    if (refusedUnchanged(rec)) continue;
    out.push({
      id: NOT_SETTLED,
      object: `node/${name}`,
      evidence: `record phase ${phase}${left.length ? `, still on it: ${left.join(', ')}` : ''}`,
    });
  }
  return out;
}
