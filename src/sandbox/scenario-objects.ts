// Scenario → Kubernetes objects (namespaces, nodes, workloads, PDBs, KubeVirt), as plain JSON.
// Pure builders: the sandbox assembly writes them into the store.
import type { KubeObject } from './kube/types.ts';
import { ANN } from './controllers/kubevirt/vmi.ts';
import type { Scenario } from './scenario.ts';

type Node = Scenario['nodes'][number];
type Pdb = Scenario['pdbs'][number];

const OWNER_LABEL = 'sandbox.drainer.dev/owner';

export function namespaceObject(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
  };
}

/** Every namespace the scenario uses, plus the ones a cluster always has. */
export function namespacesOf(s: Scenario): string[] {
  // drainer: the agent's own namespace (its fleet slot Leases live there)
  const names = new Set(['default', 'kube-system', 'kube-public', 'kube-node-lease', 'drainer']);
  if (s.kubevirt.installed) names.add(s.kubevirt.namespace);
  for (const list of [s.pods, s.replicasets, s.daemonsets, s.pdbs, s.kubevirt.vmis]) {
    for (const o of list) names.add(o.namespace);
  }
  return [...names];
}

export function nodeObject(n: Node, index: number, nowIso: string): KubeObject {
  const taints: { key: string; value?: string; effect: string; timeAdded?: string }[] = n.taints.map((t) => ({
    ...t,
  }));
  if (n.unschedulable)
    taints.push({ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: nowIso });
  const cond = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: nowIso,
    lastTransitionTime: nowIso,
  });
  const capacity = { cpu: '32', memory: '131072Mi', pods: '110', 'ephemeral-storage': '500Gi' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: n.name,
      labels: {
        // a label value holds 63 characters: the API server refuses a longer hostname label (and
        // every later write of the Node with it), so a longer node name goes without one
        ...(n.name.length <= 63 ? { 'kubernetes.io/hostname': n.name } : {}),
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'beta.kubernetes.io/arch': 'amd64',
        'node-role.kubernetes.io/worker': '',
        'kubevirt.io/schedulable': 'true',
        ...n.labels,
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0' },
    },
    spec: {
      podCIDR: `10.244.${index}.0/24`,
      ...(n.unschedulable ? { unschedulable: true } : {}),
      ...(taints.length ? { taints } : {}),
    },
    status: {
      capacity,
      allocatable: capacity,
      conditions: [
        cond(
          'MemoryPressure',
          'False',
          'KubeletHasSufficientMemory',
          'kubelet has sufficient memory available',
        ),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        { type: 'InternalIP', address: `10.0.0.${index + 10}` },
        { type: 'Hostname', address: n.name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: '',
        systemUUID: '',
        bootID: '',
        kernelVersion: '6.8.0-sandbox',
        osImage: 'drainer sandbox',
        containerRuntimeVersion: 'containerd://1.7.0',
        kubeletVersion: 'v1.32.0',
        kubeProxyVersion: 'v1.32.0',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  };
}

interface PodShape {
  namespace: string;
  labels: Record<string, string>;
  emptyDir: boolean;
  graceSeconds: number;
}

/** A pod spec as a controller's template would carry it. */
export function podSpec(p: PodShape, opts: { daemon?: boolean } = {}): Record<string, unknown> {
  const spec: Record<string, unknown> = {
    containers: [
      {
        name: 'app',
        image: 'registry.example/app:1',
        ...(p.emptyDir ? { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] } : {}),
      },
    ],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: p.graceSeconds,
    dnsPolicy: 'ClusterFirst',
    schedulerName: 'default-scheduler',
    serviceAccountName: 'default',
  };
  if (p.emptyDir) spec.volumes = [{ name: 'scratch', emptyDir: {} }];
  if (opts.daemon) {
    // What the DaemonSet controller adds: its pods survive cordons and node trouble.
    spec.tolerations = [
      'not-ready',
      'unreachable',
      'disk-pressure',
      'memory-pressure',
      'pid-pressure',
      'unschedulable',
    ]
      .map((k) => ({ key: `node.kubernetes.io/${k}`, operator: 'Exists', effect: 'NoSchedule' }))
      .concat(
        ['not-ready', 'unreachable'].map((k) => ({
          key: `node.kubernetes.io/${k}`,
          operator: 'Exists',
          effect: 'NoExecute',
        })),
      );
  }
  return spec;
}

export function replicaSetObject(
  name: string,
  p: PodShape & { replicas: number },
  extraLabels: Record<string, string> = {},
): KubeObject {
  const labels = { ...p.labels, ...extraLabels };
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: p.namespace, labels },
    spec: {
      replicas: p.replicas,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: podSpec(p) },
    },
  };
}

export function daemonSetObject(
  name: string,
  p: PodShape,
  extraLabels: Record<string, string> = {},
): KubeObject {
  const labels = { ...p.labels, ...extraLabels };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: p.namespace, labels },
    spec: {
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: podSpec(p, { daemon: true }) },
      updateStrategy: { type: 'RollingUpdate' },
    },
  };
}

/** A pod of `owner` (or unmanaged) on `node`. */
export function podObject(
  p: PodShape & { name?: string },
  node: string,
  owner?: KubeObject,
  opts: { daemon?: boolean } = {},
): KubeObject {
  const template = (
    owner?.spec as { template?: { metadata?: { labels?: Record<string, string> } } } | undefined
  )?.template;
  const metadata: KubeObject['metadata'] = {
    namespace: p.namespace,
    labels: { ...p.labels, ...template?.metadata?.labels },
  };
  if (p.name) metadata.name = p.name;
  else metadata.generateName = `${owner?.metadata.name ?? 'pod'}-`;
  if (owner) {
    metadata.ownerReferences = [
      {
        apiVersion: 'apps/v1',
        kind: owner.kind ?? 'ReplicaSet',
        name: owner.metadata.name ?? '',
        uid: owner.metadata.uid ?? '',
        controller: true,
      },
    ];
  }
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: { ...podSpec(p, opts), nodeName: node } };
}

export const ownerLabel = (name: string): Record<string, string> => ({ [OWNER_LABEL]: name });

export function pdbObject(p: Pdb): KubeObject {
  const spec: Record<string, unknown> = { selector: { matchLabels: p.selector } };
  if (p.minAvailable !== undefined) spec.minAvailable = p.minAvailable;
  if (p.maxUnavailable !== undefined) spec.maxUnavailable = p.maxUnavailable;
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: p.name, namespace: p.namespace },
    spec,
  };
}

export function kubevirtObject(s: Scenario): KubeObject {
  const k = s.kubevirt;
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'KubeVirt',
    metadata: { name: 'kubevirt', namespace: k.namespace },
    spec: {
      configuration: {
        ...(k.evictionStrategy ? { evictionStrategy: k.evictionStrategy } : {}),
        migrations: {
          nodeDrainTaintKey: k.nodeDrainTaintKey,
          parallelMigrationsPerCluster: k.parallelMigrationsPerCluster,
          parallelOutboundMigrationsPerNode: k.parallelOutboundMigrationsPerNode,
        },
      },
    },
    status: {
      phase: 'Deployed',
      observedKubeVirtVersion: `${k.version}.0`,
      targetKubeVirtVersion: `${k.version}.0`,
    },
  };
}

export function vmiObject(v: Scenario['kubevirt']['vmis'][number]): KubeObject {
  const annotations: Record<string, string> = { [ANN.node]: v.node };
  if (!v.migratable) annotations[ANN.notMigratable] = v.notMigratableReason;
  if (v.migrationSeconds !== undefined) annotations[ANN.migrationSeconds] = String(v.migrationSeconds);
  if (v.failFirstAttempts > 0) annotations[ANN.failFirstAttempts] = String(v.failFirstAttempts);
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: {
      name: v.name,
      namespace: v.namespace,
      labels: { ...v.labels, 'vm.kubevirt.io/name': v.name },
      annotations,
    },
    spec: {
      ...(v.evictionStrategy ? { evictionStrategy: v.evictionStrategy } : {}),
      ...(v.nodeSelector ? { nodeSelector: v.nodeSelector } : {}),
      ...(v.terminationGracePeriodSeconds !== undefined
        ? { terminationGracePeriodSeconds: v.terminationGracePeriodSeconds }
        : {}),
      domain: {
        devices: { disks: [{ name: 'rootdisk', disk: { bus: 'virtio' } }] },
        resources: { requests: { memory: v.memory } },
      },
      volumes: [{ name: 'rootdisk', containerDisk: { image: 'quay.io/containerdisks/fedora:latest' } }],
    },
  };
}
