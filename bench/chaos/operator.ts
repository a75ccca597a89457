// What people and other tools do to the cluster during the soak: cordon, NodeMaintenances, taints,
// deleting a gate pod or PDB, deleting a Node and registering it again, deleting drainer's
// DaemonSet with --cascade=orphan and applying it again. Straight to the API server with a
// User-Agent of its own, so the checks can tell the soak's requests from drainer's.
import { gateName } from '../../src/kube/gate.ts';
import type { Scenario } from '../../src/sandbox/index.ts';
import { nodeObject } from '../../src/sandbox/scenario-objects.ts';
import { agentDaemonSet } from './fleet.ts';

export const CHAOS_USER_AGENT = 'drainer-chaos/1';
const KUBEVIRTS = '/apis/kubevirt.io/v1/kubevirts';

export interface VmiObject {
  metadata: { name: string; namespace: string; uid?: string; labels?: Record<string, string> };
  spec?: unknown;
  status?: { phase?: string };
}
const NM = '/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances';
const DISRUPTED = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' };

interface Answer {
  status: number;
  body: Record<string, unknown> | undefined;
}

type NodeObject = {
  metadata: { name: string; resourceVersion?: string; labels?: Record<string, string> };
  spec?: { taints?: { key: string; effect: string }[]; unschedulable?: boolean };
  status?: unknown;
};

/** What a node's kubelet registers its Node with: its labels and its --register-with-taints. */
export interface KubeletNode {
  readonly labels: Record<string, string>;
  readonly taints: readonly { key: string; value?: string; effect: string }[];
}

/**
 * Each node's kubelet as the scenario set it up: the well-known labels and its --node-labels (the
 * soak's drainer.dev/reboot=true among them), its own taints; not a cordon's.
 */
export const kubeletRegistration =
  (scenario: Scenario) =>
  (node: string): KubeletNode | undefined => {
    const i = scenario.nodes.findIndex((n) => n.name === node);
    const n = scenario.nodes[i];
    if (!n) return undefined;
    const registered = nodeObject({ ...n, unschedulable: false }, i, new Date().toISOString()) as {
      metadata: { labels?: Record<string, string> };
      spec?: { taints?: KubeletNode['taints'] };
    };
    return { labels: registered.metadata.labels ?? {}, taints: registered.spec?.taints ?? [] };
  };

export class Operator {
  readonly #url: string;
  readonly #namespace: string;

  readonly #kubelet: (node: string) => KubeletNode | undefined;

  constructor(apiUrl: string, namespace: string, kubelet: (node: string) => KubeletNode | undefined) {
    this.#url = apiUrl;
    this.#namespace = namespace;
    this.#kubelet = kubelet;
  }

  async #call(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<Answer> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const res = await fetch(`${this.#url}${path}`, {
      method,
      headers: {
        'user-agent': CHAOS_USER_AGENT,
        ...(text !== undefined ? { 'content-type': contentType } : {}),
      },
      ...(text !== undefined ? { body: text } : {}),
    });
    const raw = await res.text();
    let parsed: Record<string, unknown> | undefined;
    try {
      parsed = raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed };
  }

  cordon(node: string, on: boolean): Promise<Answer> {
    return this.#call(
      'PATCH',
      `/api/v1/nodes/${node}`,
      { spec: { unschedulable: on ? true : null } },
      'application/merge-patch+json',
    );
  }

  createMaintenance(node: string): Promise<Answer> {
    return this.#call('POST', NM, {
      apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
      kind: 'NodeMaintenance',
      metadata: { name: `nm-${node}` },
      spec: { nodeName: node, reason: 'chaos soak' },
    });
  }

  deleteMaintenance(node: string): Promise<Answer> {
    return this.#call('DELETE', `${NM}/nm-${node}`);
  }

  /** Adds or removes Karpenter's disruption taint (read, change, update with the read resourceVersion; a conflict retries). */
  async taint(node: string, on: boolean): Promise<Answer> {
    for (let i = 0; ; i++) {
      const got = await this.#call('GET', `/api/v1/nodes/${node}`);
      if (got.status !== 200 || !got.body) return got;
      const n = got.body as unknown as NodeObject;
      const others = (n.spec?.taints ?? []).filter(
        (t) => !(t.key === DISRUPTED.key && t.effect === DISRUPTED.effect),
      );
      const taints = on ? [...others, DISRUPTED] : others;
      const put = await this.#call('PUT', `/api/v1/nodes/${node}`, { ...n, spec: { ...n.spec, taints } });
      if (put.status !== 409 || i >= 5) return put;
    }
  }

  deleteGatePod(node: string): Promise<Answer> {
    return this.#call('DELETE', `/api/v1/namespaces/${this.#namespace}/pods/${gateName(node)}`);
  }

  /**
   * Deletes the gate's PDB, and then its pod as the garbage collector would: the pod's controller
   * is the PDB (the sandbox runs no garbage collector; a real cluster deletes the dependent pod).
   */
  async deleteGatePdb(node: string): Promise<Answer> {
    const pdbPath = `/apis/policy/v1/namespaces/${this.#namespace}/poddisruptionbudgets/${gateName(node)}`;
    const pdb = await this.#call('GET', pdbPath);
    const gone = await this.#call('DELETE', pdbPath);
    const uid = (pdb.body?.metadata as { uid?: string } | undefined)?.uid;
    if (gone.status >= 300 || !uid) return gone;
    const podPath = `/api/v1/namespaces/${this.#namespace}/pods/${gateName(node)}`;
    const pod = await this.#call('GET', podPath);
    const meta = pod.body?.metadata as { uid?: string; ownerReferences?: { uid: string }[] } | undefined;
    if (meta?.ownerReferences?.some((o) => o.uid === uid))
      await this.#call('DELETE', podPath, {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        propagationPolicy: 'Background',
        preconditions: { uid: meta.uid },
      });
    return gone;
  }

  /**
   * `kubectl delete ds --cascade=orphan`, then `kubectl apply` of the same manifest after gapMs: a
   * DaemonSet of the same name with a new uid. The garbage collector orphans the dependents (the
   * gate PDBs lose their owner reference to the old one; the sandbox does that part of it).
   */
  async recreateDaemonSet(name: string, gapMs: number): Promise<Answer> {
    const dsPath = `/apis/apps/v1/namespaces/${this.#namespace}/daemonsets/${name}`;
    await this.#call('DELETE', dsPath, {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      propagationPolicy: 'Orphan',
    });
    await new Promise((r) => setTimeout(r, gapMs));
    return this.#call('POST', `/apis/apps/v1/namespaces/${this.#namespace}/daemonsets`, agentDaemonSet(name));
  }

  /**
   * The Node object is deleted and registered again as its kubelet does: same name, the kubelet's
   * own labels and taints (kubeletRegistration), no annotations, schedulable. Nothing drainer or an
   * operator wrote on the old Node (the queue label, the record, a cordon, an agent-off label) comes back.
   */
  async recreateNode(node: string): Promise<Answer> {
    const got = await this.#call('GET', `/api/v1/nodes/${node}`);
    if (got.status !== 200 || !got.body) return got;
    const old = got.body as unknown as NodeObject;
    const gone = await this.#call('DELETE', `/api/v1/nodes/${node}`);
    if (gone.status >= 300) return gone;
    const kubelet = this.#kubelet(node) ?? { labels: {}, taints: [] };
    return this.#call('POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: node, labels: kubelet.labels },
      spec: kubelet.taints.length ? { taints: kubelet.taints } : {},
      status: old.status,
    });
  }

  /** `kubectl label node N key=value` (value null: `key-`). */
  label(node: string, key: string, value: string | null): Promise<Answer> {
    return this.#call(
      'PATCH',
      `/api/v1/nodes/${node}`,
      { metadata: { labels: { [key]: value } } },
      'application/merge-patch+json',
    );
  }

  /** The KubeVirt CR's parallelMigrationsPerCluster, as an admin edits it (merge patch). */
  async kubevirtParallel(perCluster: number): Promise<Answer> {
    const list = await this.#call('GET', KUBEVIRTS);
    const cr = (list.body?.items as { metadata: { name: string; namespace: string } }[] | undefined)?.[0];
    if (!cr) return list;
    return this.#call(
      'PATCH',
      `/apis/kubevirt.io/v1/namespaces/${cr.metadata.namespace}/kubevirts/${cr.metadata.name}`,
      { spec: { configuration: { migrations: { parallelMigrationsPerCluster: perCluster } } } },
      'application/merge-patch+json',
    );
  }

  /** The VMIs, as listed (namespace, name, node label, phase). */
  async vmis(): Promise<VmiObject[]> {
    const got = await this.#call('GET', '/apis/kubevirt.io/v1/virtualmachineinstances');
    return (got.body?.items as VmiObject[] | undefined) ?? [];
  }

  /**
   * A VMI stopped and made again under its name, as its VM's restart or its controller does: the
   * old one deleted, and once it is gone (its grace period: up to waitMs), a new one with its spec
   * and labels, placed by the scheduler (a new uid). The new one's answer, or the delete's.
   */
  async recreateVmi(v: VmiObject, waitMs: number): Promise<Answer> {
    const path = `/apis/kubevirt.io/v1/namespaces/${v.metadata.namespace}/virtualmachineinstances/${v.metadata.name}`;
    const gone = await this.#call('DELETE', path);
    if (gone.status >= 300) return gone;
    for (const end = Date.now() + waitMs; Date.now() < end;) {
      if ((await this.#call('GET', path)).status === 404) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const { 'kubevirt.io/nodeName': _placed, ...labels } = v.metadata.labels ?? {};
    return this.#call(
      'POST',
      `/apis/kubevirt.io/v1/namespaces/${v.metadata.namespace}/virtualmachineinstances`,
      {
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachineInstance',
        metadata: { name: v.metadata.name, namespace: v.metadata.namespace, labels },
        spec: v.spec,
      },
    );
  }

  /**
   * Fails a VirtualMachineInstanceMigration in flight the way a node's trouble does: its target pod
   * removed (KubeVirt: "Migration target pod was removed during active migration"). Which one it hit.
   */
  async failMigrationInFlight(pick: <T>(xs: readonly T[]) => T): Promise<string | undefined> {
    const got = await this.#call('GET', '/apis/kubevirt.io/v1/virtualmachineinstancemigrations');
    const items = (got.body?.items ?? []) as {
      metadata: { name: string; namespace: string; uid: string };
      status?: { phase?: string };
    }[];
    const flying = items.filter((m) => !['Succeeded', 'Failed'].includes(m.status?.phase ?? ''));
    if (!flying.length) return undefined;
    const m = pick(flying);
    const pods = await this.#call(
      'GET',
      `/api/v1/namespaces/${m.metadata.namespace}/pods?labelSelector=${encodeURIComponent(`kubevirt.io/migrationJobUID=${m.metadata.uid}`)}`,
    );
    for (const p of (pods.body?.items ?? []) as { metadata: { name: string } }[])
      await this.#call('DELETE', `/api/v1/namespaces/${m.metadata.namespace}/pods/${p.metadata.name}`);
    return `${m.metadata.namespace}/${m.metadata.name}`;
  }
}
