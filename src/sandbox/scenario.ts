// The scenario: a declarative picture of the sandbox's cluster and cloud. Validated once with zod;
// cross-references (a pod's node, a server's host) are checked too, each error named by its path.
import { z } from 'zod';

const name = z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'expected a lowercase DNS name');
const labels = z.record(z.string(), z.string()).default({});
const seconds = z.number().min(0);
/** An int or a percentage string ("50%"), as PodDisruptionBudgets take them. */
const intOrPercent = z.union([z.number().int().min(0), z.string().regex(/^\d+%$/, 'expected "N%"')]);

const taint = z
  .object({
    key: z.string().min(1),
    value: z.string().optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
  })
  .strict();

const node = z
  .object({
    name,
    labels,
    taints: z.array(taint).default([]),
    unschedulable: z.boolean().default(false),
    /** The nova-compute service host, when it differs from the node name and drainer should be told. */
    novaHost: z.string().optional(),
  })
  .strict();

const serverState = z.enum([
  'ACTIVE',
  'SHUTOFF',
  'PAUSED',
  'ERROR',
  'SUSPENDED',
  'RESCUE',
  'SHELVED_OFFLOADED',
  'VERIFY_RESIZE',
]);

const hypervisor = z
  .object({
    /** nova-compute service host. */
    name: z.string().min(1),
    hypervisorHostname: z.string().optional(),
    maxConcurrentLiveMigrations: z.number().int().min(1).default(1),
    ramMb: z.number().int().min(1).default(65536),
    /** Physical cores (Placement: ×4 allocation ratio, max_unit = cores) and local disk. */
    vcpus: z.number().int().min(1).default(16),
    diskGb: z.number().int().min(1).default(1000),
    disabledReason: z.string().optional(),
    /** Live-migration bandwidth off this host (default: each server moves in its migrationSeconds). */
    migrationMbPerSecond: z.number().positive().optional(),
    /** Nova's live_migration_completion_timeout (seconds per GiB, scaled; 0: none) and timeout action. */
    completionTimeoutSecondsPerGiB: z.number().min(0).default(0),
    timeoutAction: z.enum(['abort', 'force_complete']).default('abort'),
  })
  .strict();

const server = z
  .object({
    name: z.string().min(1),
    project: z.string().min(1),
    host: z.string().min(1),
    state: serverState.default('ACTIVE'),
    ramMb: z.number().int().min(1).default(2048),
    vcpus: z.number().int().min(1).default(1),
    diskGb: z.number().int().min(0).default(10),
    bootFromVolume: z.boolean().default(false),
    migrationSeconds: seconds.optional(),
    /** How fast the guest dirties its memory; at or above the link's bandwidth it never converges. */
    dirtyMbPerSecond: z.number().min(0).default(0),
    /** How long its guest takes to power off cleanly (default: openstack.shutdownSeconds). */
    shutdownSeconds: seconds.optional(),
    locked: z.boolean().default(false),
    /** Server metadata, e.g. { "drainer.dev:maintenance": "cold" } (Nova's key pattern applies). */
    metadata: z.record(z.string().regex(/^[a-zA-Z0-9-_:. ]{1,255}$/), z.string().max(255)).optional(),
  })
  .strict();

const openstack = z
  .object({
    port: z.number().int().min(0).max(65535).default(0),
    region: z.string().default('RegionOne'),
    maxMicroversion: z
      .string()
      .regex(/^2\.\d+$/, 'expected a compute microversion like "2.96"')
      .default('2.96'),
    tokenTtlSeconds: z.number().int().min(1).default(3600),
    /** Default for servers without their own migrationSeconds. */
    migrationSeconds: seconds.default(6),
    /**
     * os-stop (and shelve): powering-off for this long. Nova waits up to shutdown_timeout (60 s by
     * default) for the guest's clean shutdown; a guest that ignores ACPI takes all of it.
     */
    shutdownSeconds: seconds.default(60),
    /** os-start, unshelve: powering-on for this long. */
    powerOnSeconds: seconds.default(5),
    /** Nova's shelved_offload_time: 0 (its default) offloads a shelved server at once; -1 never. */
    shelvedOffloadSeconds: z.number().min(-1).default(0),
    hosts: z.array(hypervisor).default([]),
    servers: z.array(server).default([]),
    faults: z
      .object({
        errorRate: z.number().min(0).max(1).default(0),
        latencyMs: z.number().min(0).default(0),
        /** Server names whose live migrations fail. */
        failMigrations: z.array(z.string()).default([]),
        /** Server names whose live migrations never finish. */
        hangMigrations: z.array(z.string()).default([]),
        /** A Nova policy that hides OS-EXT-SRV-ATTR:host (drainer must refuse, not guess). */
        hideHost: z.boolean().default(false),
        /** Server name → seconds its `updated` runs ahead of Nova's clock (a host with a fast clock). */
        clockAheadSeconds: z.record(z.string(), z.number()).default({}),
        /** Server names whose first action POST is applied but its answer dropped (connection reset). */
        dropActionAnswers: z.array(z.string()).default([]),
        /** Server name → fault message: its live migration fails and leaves it in ERROR showing that fault. */
        errorMigrations: z.record(z.string(), z.string()).default({}),
        /** Server names whose migration record ends `completed` while they stay on the source. */
        completeWithoutMove: z.array(z.string()).default([]),
      })
      .strict()
      .default({
        errorRate: 0,
        latencyMs: 0,
        failMigrations: [],
        hangMigrations: [],
        hideHost: false,
        clockAheadSeconds: {},
        dropActionAnswers: [],
        errorMigrations: {},
        completeWithoutMove: [],
      }),
  })
  .strict();

export const KUBEVIRT_VERSIONS = ['v1.4', 'v1.5', 'v1.6', 'v1.7', 'v1.8', 'v1.9'] as const;

export const evictionStrategy = z.enum(['None', 'LiveMigrate', 'LiveMigrateIfPossible', 'External']);

const vmi = z
  .object({
    name,
    namespace: name.default('default'),
    node: name,
    evictionStrategy: evictionStrategy.optional(),
    migratable: z.boolean().default(true),
    notMigratableReason: z.string().default('DisksNotLiveMigratable'),
    migrationSeconds: seconds.optional(),
    /** How long a stop takes: the VMI stays Running this long once deleted (KubeVirt's default 30). */
    terminationGracePeriodSeconds: z.number().int().min(0).optional(),
    /** The first N migrations of this VMI fail (KubeVirt then retries with backoff). */
    failFirstAttempts: z.number().int().min(0).default(0),
    /** Guest memory (the launcher pod requests it plus overhead). */
    memory: z
      .string()
      .regex(/^\d+(Mi|Gi)$/, 'expected a quantity like "2Gi"')
      .default('2Gi'),
    nodeSelector: z.record(z.string(), z.string()).optional(),
    labels,
  })
  .strict();

const kubevirt = z
  .object({
    installed: z.boolean().default(true),
    /** The KubeVirt release the emulation follows (docs/kubevirt.md, "Versions"). */
    version: z.enum(KUBEVIRT_VERSIONS).default('v1.9'),
    namespace: name.default('kubevirt'),
    nodeDrainTaintKey: z.string().min(1).default('kubevirt.io/drain'),
    evictionStrategy: evictionStrategy.optional(),
    parallelMigrationsPerCluster: z.number().int().min(1).default(5),
    parallelOutboundMigrationsPerNode: z.number().int().min(1).default(2),
    migrationSeconds: seconds.default(8),
    vmis: z.array(vmi).default([]),
  })
  .strict();

const podCommon = {
  namespace: name.default('default'),
  labels,
  emptyDir: z.boolean().default(false),
  graceSeconds: z.number().int().min(0).default(30),
};

const pod = z
  .object({
    name,
    node: name,
    owner: z.enum(['none', 'ReplicaSet', 'DaemonSet']).default('none'),
    /** Name of the owning ReplicaSet/DaemonSet (created if absent); default: the pod name. */
    ownerName: name.optional(),
    ...podCommon,
  })
  .strict();

const replicaSet = z
  .object({
    name,
    replicas: z.number().int().min(0),
    /** Nodes to spread replicas over, round robin; default: every schedulable node. */
    nodes: z.array(name).optional(),
    ...podCommon,
  })
  .strict();

const daemonSet = z
  .object({
    name,
    /** Default: every node. */
    nodes: z.array(name).optional(),
    ...podCommon,
    namespace: name.default('kube-system'),
  })
  .strict();

const pdb = z
  .object({
    name,
    namespace: name.default('default'),
    selector: z.record(z.string(), z.string()),
    minAvailable: intOrPercent.optional(),
    maxUnavailable: intOrPercent.optional(),
  })
  .strict();

const timings = z
  .object({
    /** From pod creation to Running/Ready (a real kubelet takes about 3 to 5 s with the image present). */
    podStartSeconds: seconds.default(2),
    /** Each migration phase before Running (Scheduling … TargetReady). */
    migrationStepSeconds: seconds.default(0.5),
    /** How long KubeVirt holds an evacuation migration Pending after a failed one (20 s); doubles per consecutive failure. */
    migrationBackoffSeconds: seconds.default(20),
  })
  .strict();

export const scenarioSchema = z
  .object({
    name: z.string().default('scenario'),
    description: z.string().optional(),
    clock: z
      .object({ scale: z.number().positive().default(1) })
      .strict()
      .default({ scale: 1 }),
    kubernetes: z
      .object({ port: z.number().int().min(0).max(65535).default(0) })
      .strict()
      .default({ port: 0 }),
    timings: timings.default(timings.parse({})),
    nodes: z.array(node).min(1),
    openstack: openstack.default(openstack.parse({})),
    kubevirt: kubevirt.default(kubevirt.parse({ installed: false })),
    pods: z.array(pod).default([]),
    replicasets: z.array(replicaSet).default([]),
    daemonsets: z.array(daemonSet).default([]),
    pdbs: z.array(pdb).default([]),
    /** Images the kubelet cannot pull: their pods stay Pending in ImagePullBackOff. */
    unpullableImages: z.array(z.string()).default([]),
  })
  .strict()
  .superRefine(checkReferences);

export type ScenarioInput = z.input<typeof scenarioSchema>;
export type Scenario = z.output<typeof scenarioSchema>;
export type EvictionStrategy = z.output<typeof evictionStrategy>;
export type ScenarioVmi = Scenario['kubevirt']['vmis'][number];

type Ctx = z.RefinementCtx;
type Raw = {
  nodes: { name: string }[];
  openstack: { hosts: { name: string }[]; servers: { name: string; host: string }[] };
  kubevirt: { vmis: { name: string; namespace: string; node: string }[] };
  pods: { name: string; namespace: string; node: string }[];
  replicasets: { name: string; namespace: string; nodes?: string[] }[];
  daemonsets: { name: string; namespace: string; nodes?: string[] }[];
  pdbs: { minAvailable?: unknown; maxUnavailable?: unknown }[];
};

function checkReferences(s: Raw, ctx: Ctx): void {
  const nodes = new Set<string>();
  s.nodes.forEach((n, i) => unique(nodes, n.name, ['nodes', i, 'name'], ctx));
  const known = (n: string, path: (string | number)[]) => {
    if (!nodes.has(n)) ctx.addIssue({ code: 'custom', path, message: `unknown node "${n}"` });
  };
  const hosts = new Set<string>();
  s.openstack.hosts.forEach((h, i) => unique(hosts, h.name, ['openstack', 'hosts', i, 'name'], ctx));
  s.openstack.servers.forEach((sv, i) => {
    if (!hosts.has(sv.host))
      ctx.addIssue({
        code: 'custom',
        path: ['openstack', 'servers', i, 'host'],
        message: `unknown host "${sv.host}"`,
      });
  });
  const vmis = new Set<string>();
  s.kubevirt.vmis.forEach((v, i) => {
    unique(vmis, `${v.namespace}/${v.name}`, ['kubevirt', 'vmis', i, 'name'], ctx);
    known(v.node, ['kubevirt', 'vmis', i, 'node']);
  });
  const pods = new Set<string>();
  s.pods.forEach((p, i) => {
    unique(pods, `${p.namespace}/${p.name}`, ['pods', i, 'name'], ctx);
    known(p.node, ['pods', i, 'node']);
  });
  for (const key of ['replicasets', 'daemonsets'] as const) {
    s[key].forEach((o, i) => o.nodes?.forEach((n, j) => known(n, [key, i, 'nodes', j])));
  }
  s.pdbs.forEach((p, i) => {
    if ((p.minAvailable === undefined) === (p.maxUnavailable === undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['pdbs', i],
        message: 'set exactly one of minAvailable and maxUnavailable',
      });
  });
}

function unique(seen: Set<string>, key: string, path: (string | number)[], ctx: Ctx): void {
  if (seen.has(key)) ctx.addIssue({ code: 'custom', path, message: `duplicate name "${key}"` });
  seen.add(key);
}
