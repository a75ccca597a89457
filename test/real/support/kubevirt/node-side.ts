// The KubeVirt node side of the real suite, emulated: what virt-handler does on a node (and, on a Node with no
// kubelet, what the kubelet does), so the real virt-api and virt-controller have nodes to run VMIs on. It keeps
// virt-handler's contract as KubeVirt's control plane reads it, and nothing more:
// - each node: the `kubevirt.io/schedulable=true` label, what the node labeller would find (machine type, host
//   CPU model), and a fresh `kubevirt.io/heartbeat`;
// - each VMI virt-controller has `Scheduled` on one of the nodes: phase `Running`, the `Ready` and
//   `LiveMigratable` conditions, `selinuxContext: none`, the guest's memory;
// - the migration handshake on the VMI's `status.migrationState`: the target's address, the start, then either
//   the target's domain and the source's handoff (`nodeName`, the `kubevirt.io/nodeName` label, the eviction mark
//   cleared) or the source's failure with its reason;
// - the launcher pod of a VMI that left, or of a VMI deleted: gone, as when virt-launcher exits.
// NO GUEST RUNS AND NO GUEST MEMORY IS COPIED: a "migration" is this handshake and a wait. The launcher pods on the
// real node run the pause process (scripts/real-kubevirt-launcher.sh); on the emulated node nothing runs, and
// this file writes their status as a kubelet would. How each VMI behaves is chosen by its annotations (EMU).
// Small and separate from the sandbox's full emulation (src/sandbox/controllers/kubevirt), on purpose: here
// KubeVirt's own controllers decide, this only answers for the nodes.
import type { Answer, ApiClient } from '../api-client.ts';
import type { Obj } from '../kubectl.ts';

/** The annotations a case puts on a VMI to choose how its emulated node side behaves. */
export const EMU = {
  /** "false": the LiveMigratable condition is False with the reason in `notMigratableReason`. */
  migratable: 'emulated.drainer.test/live-migratable',
  notMigratableReason: 'emulated.drainer.test/not-migratable-reason',
  /** "fail": the source reports the migration failed, with `failureReason`. */
  migration: 'emulated.drainer.test/migration',
  failureReason: 'emulated.drainer.test/failure-reason',
  /** How long the emulated migration takes, in seconds (default 3). */
  migrationSeconds: 'emulated.drainer.test/migration-seconds',
} as const;

export interface NodeSideOptions {
  /** The kit's node: its kubelet runs the launcher pods; the node side plays virt-handler there. */
  realNode: string;
  /** A Node object without a kubelet: the node side plays virt-handler and the kubelet there. */
  emulatedNode: string;
  /** The address the nodes report (migration target address, the emulated node's InternalIP). */
  nodeIp: string;
  /** Where the cases' VMIs live. */
  namespace: string;
  /** Requests as virt-handler's service account (KubeVirt's admission lets only it write a VMI's node). */
  handler: ApiClient;
  /** Requests as the cluster admin (the emulated node's kubelet: node status, lease, pod status). */
  admin: ApiClient;
  intervalMs?: number;
}

const HEARTBEAT_EVERY_MS = 15_000;
/** What virt-handler's node labeller would find on both nodes: launcher pods select the VMI's machine type (q35 by
 *  default), and a migration target pod the source's host CPU model (the default CPU is host-model). */
const NODE_LABELLER = {
  'machine-type.node.kubevirt.io/q35': 'true',
  'host-model-cpu.node.kubevirt.io/Emulated': 'true',
  'cpu-model-migration.node.kubevirt.io/Emulated': 'true',
};
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const microNow = () => new Date().toISOString().replace(/Z$/, '000Z');

function check(a: Answer, what: string): Obj {
  if (a.status >= 300) throw new Error(`${what}: ${a.status} ${JSON.stringify(a.body)?.slice(0, 300)}`);
  return a.body;
}

/** A list's items, or the answer's error naming what was listed. */
async function list(client: ApiClient, path: string, what: string): Promise<Obj[]> {
  return check(await client.request('GET', path), what).items as Obj[];
}

export class NodeSide {
  private readonly o: Required<NodeSideOptions>;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastBeat = 0;
  /** Uids of the migrations KubeVirt has made final (Succeeded or Failed). */
  private finished = new Set<string>();
  /** migrationUid → when the emulated copy started (ms). */
  private readonly started = new Map<string, number>();
  /** Errors of the last ticks (a case may print them when it fails). */
  readonly errors: string[] = [];

  constructor(o: NodeSideOptions) {
    this.o = { intervalMs: 1_000, ...o };
  }

  get nodes(): string[] {
    return [this.o.realNode, this.o.emulatedNode];
  }

  /** Registers the emulated node, beats once, and keeps answering every interval until stop(). */
  async start(): Promise<void> {
    await this.registerEmulatedNode();
    await this.tick();
    const loop = () => {
      this.timer = setTimeout(() => {
        this.running = this.tick()
          .catch((e: unknown) => void this.errors.push(String(e)))
          .finally(loop);
      }, this.o.intervalMs);
    };
    loop();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One round: heartbeats, the emulated node's kubelet, then every VMI of the namespace. */
  async tick(): Promise<void> {
    if (Date.now() - this.lastBeat >= HEARTBEAT_EVERY_MS) {
      for (const node of this.nodes) await this.heartbeat(node);
      await this.kubeletBeat();
      this.lastBeat = Date.now();
    }
    await this.emulatedKubelet();
    // virt-handler may not list migrations (KubeVirt's RBAC): the emulation reads them as the admin, only to let a
    // failed migration's target launcher exit once KubeVirt has made the migration final
    const vmims = await list(
      this.o.admin,
      `/apis/kubevirt.io/v1/namespaces/${this.o.namespace}/virtualmachineinstancemigrations`,
      'list migrations',
    );
    this.finished = new Set(
      vmims
        .filter((m) => ['Succeeded', 'Failed'].includes(m.status?.phase))
        .map((m) => m.metadata.uid as string),
    );
    const vmis = await list(
      this.o.handler,
      `/apis/kubevirt.io/v1/namespaces/${this.o.namespace}/virtualmachineinstances`,
      'list VMIs',
    );
    for (const vmi of vmis) {
      try {
        await this.answer(vmi);
      } catch (e) {
        this.errors.push(`${vmi.metadata.name}: ${String(e)}`);
      }
    }
  }

  // ---- virt-handler: the node's heartbeat ----
  private async heartbeat(node: string): Promise<void> {
    check(
      await this.o.handler.request(
        'PATCH',
        `/api/v1/nodes/${node}`,
        {
          metadata: {
            labels: { 'kubevirt.io/schedulable': 'true', ...NODE_LABELLER },
            annotations: { 'kubevirt.io/heartbeat': now() },
          },
        },
        'application/merge-patch+json',
      ),
      `heartbeat of ${node}`,
    );
  }

  // ---- virt-handler: each VMI on our nodes ----
  private async answer(vmi: Obj): Promise<void> {
    const st = vmi.status ?? {};
    if (!this.nodes.includes(st.nodeName)) return;
    if (vmi.metadata.deletionTimestamp) {
      // the domain is shut down: final, so virt-controller deletes the pods and drops its finalizer
      if (!['Succeeded', 'Failed'].includes(st.phase))
        await this.update(vmi, (v) => (v.status.phase = 'Succeeded'));
      return;
    }
    if (st.phase === 'Scheduled') return this.boot(vmi);
    if (st.phase !== 'Running') return;
    const ms = st.migrationState;
    if (ms?.migrationUid && !ms.completed) return this.migrate(vmi, ms);
    if (!ms?.completed) return;
    // after the handoff the source's launcher exits; after a failure the target's, once KubeVirt has read it
    if (!ms.failed) await this.launcherExits(vmi, (p) => p.spec.nodeName !== st.nodeName);
    else if (this.finished.has(ms.migrationUid))
      await this.launcherExits(
        vmi,
        (p) => p.metadata.labels?.['kubevirt.io/migrationJobUID'] === ms.migrationUid,
      );
  }

  /** The domain started: what virt-handler reports of a running VMI. */
  private boot(vmi: Obj): Promise<void> {
    const a = vmi.metadata.annotations ?? {};
    const migratable = a[EMU.migratable] !== 'false';
    const memory = vmi.spec.domain?.memory?.guest ?? vmi.spec.domain?.resources?.requests?.memory;
    return this.update(vmi, (v) => {
      const t = now();
      v.status.phase = 'Running';
      v.status.selinuxContext = 'none';
      v.status.migrationMethod = 'LiveMigration';
      v.status.guestOSInfo = {};
      if (memory) v.status.memory = { guestAtBoot: memory, guestCurrent: memory, guestRequested: memory };
      v.status.conditions = [
        ...((v.status.conditions ?? []) as Obj[]).filter(
          (c) => !['Ready', 'LiveMigratable'].includes(c.type),
        ),
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: t },
        migratable
          ? { type: 'LiveMigratable', status: 'True', lastProbeTime: null, lastTransitionTime: null }
          : {
              type: 'LiveMigratable',
              status: 'False',
              reason: a[EMU.notMigratableReason] ?? 'DisksNotLiveMigratable',
              message: 'emulated node side: this VMI cannot live-migrate',
              lastProbeTime: null,
              lastTransitionTime: null,
            },
      ];
    });
  }

  /** The handshake, one step per round, as the two virt-handlers take turns on the VMI. */
  private async migrate(vmi: Obj, ms: Obj): Promise<void> {
    const uid = ms.migrationUid as string;
    if (!ms.targetNode || !this.nodes.includes(ms.targetNode)) return;
    if (!ms.targetNodeAddress) {
      // target: its migration proxy listens
      return this.update(vmi, (v) => {
        v.status.migrationState.targetNodeAddress = this.o.nodeIp;
        v.status.migrationState.targetDirectMigrationNodePorts = { '49152': 0, '49153': 49152 };
      });
    }
    if (!ms.startTimestamp) {
      this.started.set(uid, Date.now());
      // source: libvirt started the migration
      return this.update(vmi, (v) => {
        v.status.migrationState.startTimestamp = now();
        v.status.migrationState.mode = 'PreCopy';
      });
    }
    const a = vmi.metadata.annotations ?? {};
    const seconds = Number(a[EMU.migrationSeconds] ?? 3);
    const since = this.started.get(uid) ?? Date.parse(ms.startTimestamp);
    if (Date.now() - since < seconds * 1000) return;
    if (a[EMU.migration] === 'fail') {
      // source: libvirt reported the failure
      this.started.delete(uid);
      return this.update(vmi, (v) => {
        Object.assign(v.status.migrationState, {
          endTimestamp: now(),
          completed: true,
          failed: true,
          failureReason: a[EMU.failureReason] ?? 'emulated node side: migration failed',
        });
      });
    }
    if (!ms.targetNodeDomainReadyTimestamp) {
      // target: the domain arrived and runs
      return this.update(vmi, (v) => {
        v.status.migrationState.targetNodeDomainDetected = true;
        v.status.migrationState.targetNodeDomainReadyTimestamp = now();
      });
    }
    // source: the handoff, the VMI now belongs to the target node
    await this.update(vmi, (v) => {
      v.metadata.labels = { ...v.metadata.labels, 'kubevirt.io/nodeName': ms.targetNode };
      v.status.nodeName = ms.targetNode;
      v.status.evacuationNodeName = '';
      v.status.migrationTransport = 'Unix';
      Object.assign(v.status.migrationState, { endTimestamp: now(), completed: true });
    });
    this.started.delete(uid);
  }

  /** virt-launcher exits: its pod goes (the real node's pause process ends on the deletion's SIGTERM). */
  private async launcherExits(vmi: Obj, which: (pod: Obj) => boolean): Promise<void> {
    const pods = await list(
      this.o.admin,
      `/api/v1/namespaces/${vmi.metadata.namespace}/pods?labelSelector=${encodeURIComponent(`kubevirt.io/created-by=${vmi.metadata.uid}`)}`,
      'list launcher pods',
    );
    for (const p of pods.filter((p) => !p.metadata.deletionTimestamp && which(p)))
      await this.o.admin.request(
        'DELETE',
        `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`,
      );
  }

  /** A VMI has no status subresource: virt-handler PUTs the whole object; a conflict waits for the next round. */
  private async update(vmi: Obj, change: (v: Obj) => void): Promise<void> {
    const v = structuredClone(vmi);
    v.status ??= {};
    change(v);
    const a = await this.o.handler.request(
      'PUT',
      `/apis/kubevirt.io/v1/namespaces/${v.metadata.namespace}/virtualmachineinstances/${v.metadata.name}`,
      v,
    );
    if (a.status !== 409) check(a, `update of VMI ${v.metadata.name}`);
  }

  // ---- the emulated node's kubelet ----
  private async registerEmulatedNode(): Promise<void> {
    const name = this.o.emulatedNode;
    const node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          'kubevirt.io/schedulable': 'true',
          'drainer.test/emulated': 'kubevirt-node-side',
        },
      },
    };
    const got = await this.o.admin.request('GET', `/api/v1/nodes/${name}`);
    if (got.status === 404)
      check(await this.o.admin.request('POST', '/api/v1/nodes', node), `create node ${name}`);
    await this.kubeletBeat();
  }

  private async kubeletBeat(): Promise<void> {
    const name = this.o.emulatedNode;
    const t = now();
    const resources = { cpu: '32', memory: '128Gi', pods: '110', 'ephemeral-storage': '100Gi' };
    check(
      await this.o.admin.request(
        'PATCH',
        `/api/v1/nodes/${name}/status`,
        {
          status: {
            capacity: resources,
            allocatable: resources,
            addresses: [
              { type: 'InternalIP', address: this.o.nodeIp },
              { type: 'Hostname', address: name },
            ],
            conditions: [
              {
                type: 'Ready',
                status: 'True',
                reason: 'KubeletReady',
                message: 'emulated kubelet',
                lastHeartbeatTime: t,
                lastTransitionTime: t,
              },
              {
                type: 'MemoryPressure',
                status: 'False',
                reason: 'KubeletHasSufficientMemory',
                lastHeartbeatTime: t,
                lastTransitionTime: t,
              },
              {
                type: 'DiskPressure',
                status: 'False',
                reason: 'KubeletHasNoDiskPressure',
                lastHeartbeatTime: t,
                lastTransitionTime: t,
              },
              {
                type: 'PIDPressure',
                status: 'False',
                reason: 'KubeletHasSufficientPID',
                lastHeartbeatTime: t,
                lastTransitionTime: t,
              },
            ],
            nodeInfo: {
              kubeletVersion: 'v1.26.0',
              kubeProxyVersion: 'v1.26.0',
              operatingSystem: 'linux',
              architecture: 'amd64',
              containerRuntimeVersion: 'emulated://0',
              osImage: 'emulated KubeVirt node side (no kubelet)',
              kernelVersion: '',
              machineID: '',
              systemUUID: '',
              bootID: '',
            },
          },
        },
        'application/strategic-merge-patch+json',
      ),
      `status of node ${name}`,
    );
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: 'kube-node-lease' },
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: microNow() },
    };
    const put = await this.o.admin.request(
      'PUT',
      `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`,
      lease,
    );
    if (put.status === 404)
      check(
        await this.o.admin.request(
          'POST',
          '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
          lease,
        ),
        'lease',
      );
  }

  /** Pods bound to the emulated node: Running and Ready at once; deleted ones removed (no container to stop). */
  private async emulatedKubelet(): Promise<void> {
    const pods = await list(
      this.o.admin,
      `/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${this.o.emulatedNode}`)}`,
      'list pods of the emulated node',
    );
    for (const p of pods) {
      const path = `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`;
      if (p.metadata.deletionTimestamp) {
        await this.o.admin.request('DELETE', path, {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          gracePeriodSeconds: 0,
          preconditions: { uid: p.metadata.uid },
        });
        continue;
      }
      if (p.status?.phase && p.status.phase !== 'Pending') continue;
      const t = now();
      const containers = (p.spec.containers as Obj[]).map((c) => ({
        name: c.name,
        image: c.image,
        imageID: c.image,
        containerID: `emulated://${p.metadata.uid}/${c.name}`,
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: t } },
      }));
      const cond = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: t });
      check(
        await this.o.admin.request(
          'PATCH',
          `${path}/status`,
          {
            status: {
              phase: 'Running',
              hostIP: this.o.nodeIp,
              podIP: this.o.nodeIp,
              startTime: t,
              conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(cond),
              containerStatuses: containers,
            },
          },
          'application/strategic-merge-patch+json',
        ),
        `status of pod ${p.metadata.name}`,
      );
    }
  }
}
