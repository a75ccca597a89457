// What the demo shows, read from the sandbox itself (the way kubectl and the OpenStack CLI would
// see it, but in-process so it adds nothing to the API request logs): the node's phase, each Nova
// server and VMI that was on the node, how many of its pods have been evicted, and who holds the
// fleet's evacuation slots.
import { holderNode } from '../core/fleet/budget.ts';
import { parseRecord, STATE_ANNOTATION, type NodeRecord, type Phase } from '../core/record/record.ts';
import { MIGRATION_ENDED } from '../sandbox/controllers/kubevirt/migration.ts';
import type { Sandbox } from '../sandbox/index.ts';
import type { KubeObject } from '../sandbox/kube/types.ts';
import type { MigrationView } from '../sandbox/openstack/index.ts';

export type ItemState = 'waiting' | 'migrating' | 'retrying' | 'moved' | 'stopped' | 'stayed';

export interface TrackedItem {
  readonly kind: 'nova' | 'kubevirt';
  readonly id: string;
  /** Server name, or namespace/name of a VMI. */
  readonly name: string;
  readonly source: string;
  state: ItemState;
  target?: string;
  attempts: number;
  /** A live migration of it that drainer forced to complete (Nova accepted the force_complete). */
  forced?: boolean;
  /** Simulated epoch ms. */
  startedAt?: number;
  endedAt?: number;
}

export interface PodProgress {
  /** Pods a drain evicts (not DaemonSet or virt-launcher pods). */
  readonly total: number;
  /** Eviction accepted: terminating or gone. */
  evicted: number;
  /** Evicted but still terminating (their grace period). */
  terminating: number;
}

/** A fleet slot (Lease drainer-evacuation-<i>) and the node holding it. */
export interface SlotHolder {
  readonly slot: string;
  readonly node: string;
}

export interface Snapshot {
  readonly phase: Phase | 'InService';
  readonly record: NodeRecord | undefined;
  /** Every held fleet slot, this node's included. */
  readonly holders: readonly SlotHolder[];
  readonly items: readonly TrackedItem[];
  readonly pods: PodProgress;
  /** Simulated epoch ms. */
  readonly now: number;
}

const LEASES = 'leases.coordination.k8s.io';
const VMIS = 'virtualmachineinstances.kubevirt.io';
const VMIMS = 'virtualmachineinstancemigrations.kubevirt.io';
const NOVA_DONE = new Set(['completed', 'confirmed']);
const FORCE_COMPLETE = /\/servers\/([^/]+)\/migrations\/[^/]+\/action$/;
const NOVA_FAILED = new Set(['error', 'failed', 'cancelled', 'reverted']);

interface VmiStatus {
  phase?: string;
  nodeName?: string;
  migrationState?: { endTimestamp?: string; targetNode?: string; migrationUid?: string };
}
const vmiStatus = (o: KubeObject | undefined): VmiStatus => o?.status ?? {};

/** The nova-compute host of a node, as the scenario lays it out (mapping, exact name, FQDN). */
export function novaHostOf(sb: Sandbox, node: string): string | undefined {
  const mapped = sb.scenario.nodes.find((n) => n.name === node)?.novaHost;
  if (mapped) return mapped;
  const hosts = sb.scenario.openstack.hosts;
  const match = (h: { name: string; hypervisorHostname?: string | undefined }) =>
    [h.name, h.hypervisorHostname].some((n) => n === node || n?.startsWith(`${node}.`));
  return hosts.find((h) => h.name === node)?.name ?? hosts.find(match)?.name;
}

/** Pods a drain would evict: not owned by a DaemonSet, not a VMI's launcher (those move with the VMI). */
function drainable(pod: KubeObject): boolean {
  const owner = pod.metadata.ownerReferences?.find((o) => o.controller);
  if (owner?.kind === 'DaemonSet') return false;
  return pod.metadata.labels?.['kubevirt.io'] !== 'virt-launcher';
}

export class Tracker {
  readonly #sb: Sandbox;
  readonly #node: string;
  readonly #items: TrackedItem[];
  readonly #pods: Map<string, string>;
  readonly #slotNamespace: string;
  /** Servers whose live migration Nova was asked to force, from its request log (read up to #logRead). */
  readonly #forced = new Set<string>();
  #logRead = 0;

  /**
   * Call before the cordon: what is on the node now is what should move. The fleet's slot
   * Leases are in `slotNamespace` (fleet.namespace).
   */
  constructor(sb: Sandbox, node: string, slotNamespace = 'drainer') {
    this.#sb = sb;
    this.#node = node;
    this.#slotNamespace = slotNamespace;
    const host = novaHostOf(sb, node);
    const servers = host ? sb.openstack.state.serversOnHost(host) : [];
    const vmis = sb.scenario.kubevirt.installed
      ? sb.kube.store.list(VMIS).filter((v) => vmiStatus(v).nodeName === node)
      : [];
    this.#items = [
      ...servers.map((s) => ({
        kind: 'nova' as const,
        id: s.id,
        name: s.name,
        source: s.host,
        state: 'waiting' as const,
        attempts: 0,
      })),
      ...vmis.map((v) => ({
        kind: 'kubevirt' as const,
        id: v.metadata.uid ?? '',
        name: `${v.metadata.namespace}/${v.metadata.name}`,
        source: node,
        state: 'waiting' as const,
        attempts: 0,
      })),
    ];
    const pods = sb.kube.store
      .list('pods', { fieldSelector: `spec.nodeName=${node}` })
      .filter((p) => drainable(p) && !p.metadata.deletionTimestamp);
    this.#pods = new Map(
      pods.map((p) => [p.metadata.uid ?? '', `${p.metadata.namespace}/${p.metadata.name}`]),
    );
  }

  /** Reads the sandbox once more and returns the current picture. */
  snapshot(): Snapshot {
    const now = this.#sb.clock.now();
    this.#readForced();
    for (const item of this.#items) {
      if (item.kind === 'nova') this.#updateServer(item);
      else this.#updateVmi(item, now);
    }
    const node = this.#store().get('nodes', undefined, this.#node);
    const record = parseRecord(node.metadata.annotations?.[STATE_ANNOTATION]);
    return {
      phase: record?.phase ?? 'InService',
      record,
      holders: this.#holders(),
      items: this.#items.map((i) => ({ ...i })),
      pods: this.#podProgress(),
      now,
    };
  }

  /** After the evacuation: what never moved stayed (blocked, or the evacuation failed first). */
  settle(): Snapshot {
    const s = this.snapshot();
    for (const item of this.#items) if (item.state === 'waiting') item.state = 'stayed';
    return { ...s, items: this.#items.map((i) => ({ ...i })) };
  }

  #store() {
    return this.#sb.kube.store;
  }

  /** The scenario moment of a stamp (objects carry real time; the demo counts scenario time). */
  #moment(uid: string | undefined, field: string, iso: string | undefined): number | undefined {
    return iso ? this.#store().stamps.momentOf(uid, field, Date.parse(iso)) : undefined;
  }

  #holders(): SlotHolder[] {
    return this.#store()
      .list(LEASES, { namespace: this.#slotNamespace })
      .flatMap((l) => {
        const node = (l.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
        // the fleet slots only: each agent's own node Lease is not a slot
        const slot = l.metadata.labels?.['app.kubernetes.io/component'] === 'fleet-slot';
        return node && slot ? [{ slot: l.metadata.name ?? '', node: holderNode(node) }] : [];
      })
      .sort((a, b) => a.slot.localeCompare(b.slot));
  }

  #podProgress(): PodProgress {
    const mine = this.#store()
      .list('pods', { fieldSelector: `spec.nodeName=${this.#node}` })
      .filter((p) => this.#pods.has(p.metadata.uid ?? ''));
    const terminating = mine.filter((p) => p.metadata.deletionTimestamp).length;
    return { total: this.#pods.size, evicted: this.#pods.size - mine.length + terminating, terminating };
  }

  /** POST /servers/{id}/migrations/{mid}/action (force_complete is its only action) that Nova accepted. */
  #readForced(): void {
    const log = this.#sb.openstack.requestLog;
    for (; this.#logRead < log.length; this.#logRead++) {
      const r = log[this.#logRead];
      const id = r && r.method === 'POST' && r.status < 300 ? FORCE_COMPLETE.exec(r.path)?.[1] : undefined;
      if (id) this.#forced.add(id);
    }
  }

  #updateServer(item: TrackedItem): void {
    const state = this.#sb.openstack.state;
    const server = state.server(item.id);
    const migrations: MigrationView[] = state.migrations(item.id).sort((a, b) => a.id - b.id);
    const last = migrations.at(-1);
    item.attempts = migrations.length;
    item.startedAt ??= migrations[0]?.createdAt;
    if (!server || !last) return;
    // moved once Nova says so: a cold migration sits on the target in VERIFY_RESIZE until confirmed; a
    // live one runs there from the switch, its record still `running` through the source's post-migration
    const landed = last.type === 'live-migration' && last.landedAt !== undefined && !server.taskState;
    if (server.host !== item.source && (NOVA_DONE.has(last.status) || landed)) {
      item.state = 'moved';
      item.target = server.host;
      if (this.#forced.has(item.id)) item.forced = true;
      item.endedAt ??= landed ? last.landedAt : last.updatedAt;
    } else if (NOVA_FAILED.has(last.status)) {
      item.state = 'retrying';
    } else {
      item.state = 'migrating';
      if (last.destHost) item.target = last.destHost;
    }
  }

  #updateVmi(item: TrackedItem, now: number): void {
    const [ns, name] = item.name.split('/') as [string, string];
    const store = this.#store();
    const vmi = store.list(VMIS, { namespace: ns }).find((v) => v.metadata.name === name);
    const migrations = store
      .list(VMIMS, { namespace: ns })
      .filter((m) => (m.spec as { vmiName?: string } | undefined)?.vmiName === name)
      .map((m) => ({ m, at: store.stamps.metaMoment(m, 'creationTimestamp') }))
      .sort((a, b) => a.at - b.at);
    const last = migrations.at(-1)?.m;
    const status = vmiStatus(vmi);
    item.attempts = migrations.length;
    item.startedAt ??= migrations[0]?.at;
    if (!vmi || status.phase === 'Succeeded' || status.phase === 'Failed') {
      item.state = 'stopped';
      item.endedAt ??= now;
    } else if (status.nodeName && status.nodeName !== item.source) {
      item.state = 'moved';
      item.target = status.nodeName;
      const st = status.migrationState;
      item.endedAt ??= this.#moment(st?.migrationUid, MIGRATION_ENDED, st?.endTimestamp) ?? now;
    } else if (last) {
      const phase = (last.status as { phase?: string } | undefined)?.phase;
      item.state = phase === 'Failed' ? 'retrying' : 'migrating';
      const target = status.migrationState?.targetNode;
      if (target) item.target = target;
    }
  }
}
