// The one configuration schema. Defaults live here; README and config.yaml.example are checked against it.
// zod/mini (zod's validation, functional API; ./zod.ts): the build bundles only what the schema uses,
// where importing classic zod at start cost the daemon ~45 ms and ~4 MB (bench footprint).
import * as z from './zod.ts';
import { duration } from './duration.ts';
import { dflt, int, opt, section } from './schema-parts.ts';
import { fleetSchema } from './schema-fleet.ts';

export {
  blockersSchema,
  fleetSchema,
  freezeSchema,
  maintenanceWindowSchema,
  prometheusBlockerSchema,
} from './schema-fleet.ts';

const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** Keystone v3 auth, as in clouds.yaml `auth:` (names camelCased). */
export const openstackAuthSchema = z.strictObject({
  authUrl: opt(z.url(), 'Keystone v3 URL (OS_AUTH_URL)'),
  username: opt(z.string(), '(OS_USERNAME)'),
  userId: opt(z.string(), '(OS_USER_ID)'),
  password: opt(z.string(), '(OS_PASSWORD); secret, never logged'),
  userDomainName: opt(z.string(), '(OS_USER_DOMAIN_NAME)'),
  userDomainId: opt(z.string(), '(OS_USER_DOMAIN_ID)'),
  projectName: opt(z.string(), '(OS_PROJECT_NAME)'),
  projectId: opt(z.string(), '(OS_PROJECT_ID)'),
  projectDomainName: opt(z.string(), '(OS_PROJECT_DOMAIN_NAME)'),
  projectDomainId: opt(z.string(), '(OS_PROJECT_DOMAIN_ID)'),
  applicationCredentialId: opt(z.string(), '(OS_APPLICATION_CREDENTIAL_ID); sends no scope'),
  applicationCredentialName: opt(z.string(), '(OS_APPLICATION_CREDENTIAL_NAME), with a user'),
  applicationCredentialSecret: opt(z.string(), '(OS_APPLICATION_CREDENTIAL_SECRET); secret, never logged'),
});

export const openstackSchema = z.strictObject({
  cloud: opt(z.string(), 'cloud name in clouds.yaml (OS_CLOUD)'),
  auth: z._default(openstackAuthSchema, {}),
  regionName: opt(z.string(), 'catalog region (OS_REGION_NAME)'),
  interface: dflt(z.enum(['public', 'internal', 'admin']), 'public', 'catalog interface (OS_INTERFACE)'),
  cacert: opt(z.string(), 'CA bundle file (OS_CACERT)'),
  cert: opt(z.string(), 'client certificate file (OS_CERT)'),
  key: opt(z.string(), 'client key file (OS_KEY)'),
  insecure: dflt(z.boolean(), false, 'skip TLS verification (OS_INSECURE); never in production'),
  requestTimeout: dflt(duration(), 30, 'per-request timeout, seconds'),
});

export const novaSchema = z.strictObject({
  enabled: dflt(z.boolean(), true, 'run the Nova plugin'),
  hostMapping: dflt(z.record(z.string(), z.string()), {}, 'node name → nova-compute service host'),
  maxMicroversion: opt(
    z.string().check(z.regex(/^2\.\d+$/, 'expected a compute microversion like "2.53"')),
    'cap the negotiated compute microversion',
  ),
  maxConcurrentMigrations: dflt(int(1, 64), 1, 'migrations in flight per host'),
  submitAhead: opt(
    int(0, 64),
    'migrations submitted beyond maxConcurrentMigrations, queued by Nova for the next free slot (unset: 3 × maxConcurrentMigrations, at least 5, plus maxConcurrentMigrations for post-migrations, from microversion 2.65, else 0)',
  ),
  retries: dflt(int(0, 20), 2, 'retries of a failed migration'),
  retryBackoff: dflt(duration(), 10, 'first backoff between retries, doubled each time'),
  migrationTimeout: dflt(duration(), 1800, 'per-server deadline'),
  abortOnTimeout: dflt(z.boolean(), true, 'abort a migration that passed its deadline (2.24+)'),
  stallAfter: dflt(
    duration(),
    180,
    'a live migration whose least memory left has not fallen for this long is stalled (it will not converge)',
  ),
  onStall: dflt(
    z.enum(['force-complete', 'abort', 'wait']),
    'force-complete',
    'a stalled live migration: force it to finish (2.22+; the guest pauses briefly), abort it (2.24+; retried as a failed attempt), or only report it',
  ),
  pollInterval: dflt(
    duration(),
    120,
    'longest wait between two looks at in-flight servers (the poll adapts below it)',
  ),
  coldMigrateStopped: dflt(z.boolean(), true, 'cold-migrate SHUTOFF servers'),
  notifyTimeout: dflt(
    duration(),
    3600,
    'how long a server whose metadata drainer.dev:maintenance is notify waits for its owner to move it before it takes the default way out',
  ),
  onError: dflt(
    z.enum(['block', 'last', 'skip']),
    'block',
    'a server in ERROR: refuse the evacuation (block), move the healthy servers first and try it last with a cold migration (last), or leave it on the host and go on (skip)',
  ),
  disabledReasonPrefix: dflt(
    z.string().check(z.minLength(1)),
    'drainer:',
    'marks a service disabled by drainer',
  ),
});

export const kubevirtSchema = z.strictObject({
  enabled: dflt(z.boolean(), true, 'run the KubeVirt plugin (does nothing where KubeVirt is absent)'),
  required: dflt(z.boolean(), false, 'fail when KubeVirt is not installed'),
  trigger: dflt(
    z.enum(['taint', 'eviction', 'both']),
    'taint',
    'how KubeVirt is asked to migrate: its drain taint, launcher-pod eviction, or both',
  ),
  triggerGraceSeconds: dflt(duration(), 30, 'with trigger "both": wait before evicting'),
  migrationTimeout: opt(
    duration(),
    "fixed per-VMI deadline of a VMI's migration: the time its migrations run, plus KubeVirt's backoff between failed attempts; a wait in KubeVirt's queue is not counted (unset: from the guest's memory, see migrationTimeoutPerGiB)",
  ),
  migrationTimeoutPerGiB: opt(
    duration(),
    "per-VMI deadline per GB of what KubeVirt copies, counted as KubeVirt does: memory plus block-migrated disks, decimal GB rounded up (unset: the KubeVirt CR's completionTimeoutPerGiB, else KubeVirt's default 150)",
  ),
  migrationTimeoutMargin: dflt(
    duration(),
    600,
    'added to the per-GB deadline: KubeVirt starts its clock in the launcher, drainer at Scheduling; this covers the target scheduling and start and the handover',
  ),
  nonMigratable: dflt(
    z.enum(['block', 'shutdown', 'skip']),
    'block',
    'VMIs that must migrate but cannot: fail the evacuation, stop them, or leave them',
  ),
  pollInterval: dflt(duration(), 2, 'how often VMIs and migrations are listed'),
  notifyTimeout: dflt(
    duration(),
    1800,
    'drainer.dev/maintenance: notify on a VM/VMI: how long its owner has to move it before drainer live-migrates it',
  ),
  external: dflt(
    z.enum(['migrate', 'mark']),
    'mark',
    "VMIs with evictionStrategy External, which KubeVirt reserves for another controller (e.g. Cluster API's KubeVirt provider): drainer only marks them by eviction and waits until their controller has taken them off the node (mark), or, where no such controller runs, migrates them itself once KubeVirt names the node (migrate)",
  ),
});

export const drainSchema = z.strictObject({
  enabled: dflt(z.boolean(), true, 'evict pods after the VMs moved'),
  requirePluginsSucceeded: dflt(z.boolean(), true, 'drain only when every plugin succeeded'),
  timeout: dflt(duration(), 900, 'deadline of the pod drain'),
  gracePeriodSeconds: dflt(int(-1), -1, "-1 = the pod's own"),
  deleteEmptyDirData: dflt(z.boolean(), true, 'evict pods with emptyDir volumes (their data is lost)'),
  force: dflt(z.boolean(), false, 'evict pods without a controller'),
  podSelector: dflt(z.string(), '', 'label selector of pods to drain'),
  concurrency: dflt(int(1, 200), 20, 'evictions in flight'),
  evictionRetryInterval: dflt(
    duration(),
    5,
    'longest wait after a 429; sooner when the budget allows a disruption again',
  ),
});

export const evacuationSchema = z.strictObject({
  timeout: dflt(duration(), 3600, 'deadline of the whole evacuation'),
  abortOnCancel: dflt(z.boolean(), false, 'on uncordon, abort in-flight migrations'),
  capacityCheck: dflt(
    z.enum(['enforce', 'warn', 'off']),
    'enforce',
    'before the first change, check that everything fits on the other hosts (Placement, node allocatable); enforce: refuse (Failed, InsufficientCapacity) when it does not or the check cannot run; warn: an Event, then go on; off: skip',
  ),
  memoryAlertAfter: dflt(
    duration(),
    1800,
    'the DrainerEvacuationMemoryNotFalling alert fires when the memory left to move off a node has not gone down for this long (exported as drainer_evacuation_memory_alert_after_seconds)',
  ),
});

export const nodeMaintenanceSchema = z.strictObject({
  mode: dflt(
    z.enum(['own', 'observe', 'off']),
    'own',
    'own: drainer acts on and updates NodeMaintenances; observe: another operator does; off: ignored',
  ),
});

export const drainGateSchema = z.strictObject({
  enabled: dflt(
    z.boolean(),
    true,
    'keep a gate pod drainer-gate-<node>-<hash> whose PodDisruptionBudget holds every Eviction-API drain of the node until its VMs have left; false: the agent deletes its gate pod at start',
  ),
  image: dflt(
    z.string().check(z.minLength(1)),
    'registry.k8s.io/pause:3.10',
    'image of the gate pod (a pause image already on every node; point it at your mirror)',
  ),
  holdTimeout: dflt(
    duration({ min: 1, max: 86_400 }),
    120,
    'seconds a restore waits for the drain gate to hold (PDB observed, gate pod Running and Ready) before it enables nova-compute and uncordons anyway, with a DrainGateNotHeld warning',
  ),
});

export const triggersSchema = z.strictObject({
  taints: dflt(
    z.array(z.string().check(z.minLength(1))),
    ['karpenter.sh/disrupted', 'ToBeDeletedByClusterAutoscaler'],
    "taint keys that evacuate a node as a cordon does (removed: restored); drainer's own and KubeVirt's drain taint never count",
  ),
});

export const clusterApiSchema = z.strictObject({
  preDrainHook: dflt(
    z.boolean(),
    true,
    "hold Cluster API's pre-drain hook on the node's Machine (where the Machine CRD is served): a deleted Machine's node is evacuated before Cluster API drains it",
  ),
});

/** The host's own shutdown (systemd-logind; README "When the host reboots by itself"). */
export const shutdownSchema = z.strictObject({
  enabled: dflt(
    z.boolean(),
    true,
    "hold a logind delay lock while the node hosts VMs and evacuate on the host's own shutdown or reboot (off, or no logind: as before, said once at start)",
  ),
  busSocket: dflt(
    z.string(),
    '/run/dbus/system_bus_socket',
    "the host's D-Bus system bus socket (mounted into the pod)",
  ),
  inhibitCommand: dflt(
    z.array(z.string().check(z.minLength(1))).check(z.minLength(1)),
    ['/usr/bin/systemd-inhibit'],
    'systemd-inhibit, an absolute path, with any prefix that runs it; it holds the delay lock for the agent',
  ),
  releaseMargin: dflt(
    duration(),
    5,
    "seconds before logind's deadline (InhibitDelayMaxUSec) the lock is given back, at most half of it",
  ),
  migrationRate: dflt(
    z.number().check(z.positive()),
    1024,
    "MiB/s a host's live migrations move together (its link), for drainer plan's estimate of an evacuation against logind's time",
  ),
});

export const serverSchema = z.strictObject({
  enabled: dflt(z.boolean(), true, 'serve /healthz, /readyz and /metrics'),
  bindAddress: dflt(z.string(), '0.0.0.0', 'address of the health and metrics server'),
  port: dflt(int(0, 65535), 8080, 'port of the health and metrics server'),
});

export const configSchema = z.strictObject({
  nodeName: opt(z.string().check(z.minLength(1)), 'node to act on (NODE_NAME)'),
  instance: opt(
    z.string().check(z.minLength(1)),
    "this agent instance, the holder of its node's Lease (POD_NAME/POD_UID; default <hostname>/<pid>)",
  ),
  logLevel: dflt(logLevel, 'info', 'log level (--log-level)'),
  dryRun: dflt(z.boolean(), false, 'plan and log, change nothing (--dry-run)'),
  kubeconfig: opt(z.string(), 'kubeconfig path (KUBECONFIG, --kubeconfig)'),
  kubeContext: opt(
    z.string().check(z.minLength(1)),
    "the kubeconfig's context to use (--context); default: its current-context",
  ),
  kubeRequestTimeout: dflt(
    duration(),
    30,
    "per-request timeout of the CLI commands' Kubernetes API calls (not watches), seconds",
  ),
  resyncInterval: dflt(
    duration(),
    300,
    'periodic re-check of the node, so missed events heal (an `Evacuated` node whose maintenance is a declared reboot has its host listed every 10 s, or this if shorter)',
  ),
  strandedCheckInterval: dflt(
    duration(),
    900,
    "how often an agent whose node is in service with no record looks again for drainer's changes left on it (a server drainer stopped elsewhere, whose record was lost with its Node, that its owner moved here cold; a service disabled by drainer): 1-2 cloud requests a look; 0: only at the agent's start and when the Node is registered anew",
  ),
  server: section(serverSchema),
  evacuation: section(evacuationSchema),
  drain: section(drainSchema),
  nodeMaintenance: section(nodeMaintenanceSchema),
  fleet: section(fleetSchema),
  drainGate: section(drainGateSchema),
  triggers: section(triggersSchema),
  clusterAPI: section(clusterApiSchema),
  shutdown: section(shutdownSchema),
  openstack: section(openstackSchema),
  nova: section(novaSchema),
  kubevirt: section(kubevirtSchema),
});

export type Config = z.output<typeof configSchema>;
export type OpenStackConfig = Config['openstack'];
export type NovaConfig = Config['nova'];
export type KubevirtConfig = Config['kubevirt'];
export type DrainConfig = Config['drain'];
export type FleetConfig = Config['fleet'];
