// The one configuration schema. Defaults live here; README and config.yaml.example are checked against it.
import { z } from 'zod';
import { duration } from './duration.ts';

const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** Keystone v3 auth, as in clouds.yaml `auth:` (names camelCased). */
export const openstackAuthSchema = z
  .object({
    authUrl: z.url().optional().describe('Keystone v3 URL (OS_AUTH_URL)'),
    username: z.string().optional().describe('(OS_USERNAME)'),
    userId: z.string().optional().describe('(OS_USER_ID)'),
    password: z.string().optional().describe('(OS_PASSWORD); secret, never logged'),
    userDomainName: z.string().optional().describe('(OS_USER_DOMAIN_NAME)'),
    userDomainId: z.string().optional().describe('(OS_USER_DOMAIN_ID)'),
    projectName: z.string().optional().describe('(OS_PROJECT_NAME)'),
    projectId: z.string().optional().describe('(OS_PROJECT_ID)'),
    projectDomainName: z.string().optional().describe('(OS_PROJECT_DOMAIN_NAME)'),
    projectDomainId: z.string().optional().describe('(OS_PROJECT_DOMAIN_ID)'),
    applicationCredentialId: z.string().optional().describe('(OS_APPLICATION_CREDENTIAL_ID); sends no scope'),
    applicationCredentialName: z
      .string()
      .optional()
      .describe('(OS_APPLICATION_CREDENTIAL_NAME), with a user'),
    applicationCredentialSecret: z
      .string()
      .optional()
      .describe('(OS_APPLICATION_CREDENTIAL_SECRET); secret, never logged'),
  })
  .strict();

export const openstackSchema = z
  .object({
    cloud: z.string().optional().describe('cloud name in clouds.yaml (OS_CLOUD)'),
    auth: openstackAuthSchema.default({}),
    regionName: z.string().optional().describe('catalog region (OS_REGION_NAME)'),
    interface: z
      .enum(['public', 'internal', 'admin'])
      .default('public')
      .describe('catalog interface (OS_INTERFACE)'),
    cacert: z.string().optional().describe('CA bundle file (OS_CACERT)'),
    cert: z.string().optional().describe('client certificate file (OS_CERT)'),
    key: z.string().optional().describe('client key file (OS_KEY)'),
    insecure: z.boolean().default(false).describe('skip TLS verification (OS_INSECURE); never in production'),
    requestTimeout: duration().default(30).describe('per-request timeout, seconds'),
  })
  .strict();

export const novaSchema = z
  .object({
    enabled: z.boolean().default(true).describe('run the Nova plugin'),
    hostMapping: z
      .record(z.string(), z.string())
      .default({})
      .describe('node name → nova-compute service host'),
    maxMicroversion: z
      .string()
      .regex(/^2\.\d+$/, 'expected a compute microversion like "2.53"')
      .optional()
      .describe('cap the negotiated compute microversion'),
    maxConcurrentMigrations: z
      .number()
      .int()
      .min(1)
      .max(64)
      .default(1)
      .describe('migrations in flight per host'),
    submitAhead: z
      .number()
      .int()
      .min(0)
      .max(64)
      .optional()
      .describe(
        'migrations submitted beyond maxConcurrentMigrations, queued by Nova for the next free slot (unset: 3 × maxConcurrentMigrations, at least 5, from microversion 2.65, else 0)',
      ),
    retries: z.number().int().min(0).max(20).default(2).describe('retries of a failed migration'),
    retryBackoff: duration().default(10).describe('first backoff between retries, doubled each time'),
    migrationTimeout: duration().default(1800).describe('per-server deadline'),
    abortOnTimeout: z.boolean().default(true).describe('abort a migration that passed its deadline (2.24+)'),
    pollInterval: duration()
      .default(120)
      .describe('longest wait between two looks at in-flight servers (the poll adapts below it)'),
    coldMigrateStopped: z.boolean().default(true).describe('cold-migrate SHUTOFF servers'),
    disabledReasonPrefix: z
      .string()
      .min(1)
      .default('drainer:')
      .describe('marks a service disabled by drainer'),
  })
  .strict();

export const kubevirtSchema = z
  .object({
    enabled: z
      .boolean()
      .default(true)
      .describe('run the KubeVirt plugin (does nothing where KubeVirt is absent)'),
    required: z.boolean().default(false).describe('fail when KubeVirt is not installed'),
    trigger: z
      .enum(['taint', 'eviction', 'both'])
      .default('taint')
      .describe('how KubeVirt is asked to migrate: its drain taint, launcher-pod eviction, or both'),
    triggerGraceSeconds: duration().default(30).describe('with trigger "both": wait before evicting'),
    migrationTimeout: duration().default(1800).describe('per-VMI deadline'),
    nonMigratable: z
      .enum(['block', 'shutdown', 'skip'])
      .default('block')
      .describe('VMIs that must migrate but cannot: fail the evacuation, stop them, or leave them'),
    pollInterval: duration().default(2).describe('how often VMIs and migrations are listed'),
  })
  .strict();

export const drainSchema = z
  .object({
    enabled: z.boolean().default(true).describe('evict pods after the VMs moved'),
    requirePluginsSucceeded: z.boolean().default(true).describe('drain only when every plugin succeeded'),
    timeout: duration().default(900).describe('deadline of the pod drain'),
    gracePeriodSeconds: z.number().int().min(-1).default(-1).describe("-1 = the pod's own"),
    deleteEmptyDirData: z
      .boolean()
      .default(true)
      .describe('evict pods with emptyDir volumes (their data is lost)'),
    force: z.boolean().default(false).describe('evict pods without a controller'),
    podSelector: z.string().default('').describe('label selector of pods to drain'),
    concurrency: z.number().int().min(1).max(200).default(20).describe('evictions in flight'),
    evictionRetryInterval: duration()
      .default(5)
      .describe('longest wait after a 429; sooner when the budget allows a disruption again'),
  })
  .strict();

export const evacuationSchema = z
  .object({
    timeout: duration().default(3600).describe('deadline of the whole evacuation'),
    abortOnCancel: z.boolean().default(false).describe('on uncordon, abort in-flight migrations'),
    capacityCheck: z
      .enum(['enforce', 'warn', 'off'])
      .default('enforce')
      .describe(
        'before the first change, check that everything fits on the other hosts (Placement, node allocatable); enforce: refuse (Failed, InsufficientCapacity) when it does not or the check cannot run; warn: an Event, then go on; off: skip',
      ),
  })
  .strict();

export const nodeMaintenanceSchema = z
  .object({
    mode: z
      .enum(['own', 'observe', 'off'])
      .default('own')
      .describe(
        'own: drainer acts on and updates NodeMaintenances; observe: another operator does; off: ignored',
      ),
  })
  .strict();

/** An integer ≥ 0, or a percentage such as "10%"; a string of digits is the integer (env values). */
const budget = () =>
  z.union([z.number(), z.string()]).transform((value, ctx): number | `${number}%` => {
    const m = /^\s*(\d+)(%?)\s*$/.exec(String(value));
    if (m && (typeof value === 'string' || Number.isInteger(value))) {
      const n = Number(m[1]);
      if (!m[2]) return n;
      if (n >= 1 && n <= 100) return `${n}%`;
    }
    ctx.addIssue({
      code: 'custom',
      message: `expected an integer >= 0 or a percentage such as "10%" (1-100), got ${JSON.stringify(value)}`,
    });
    return z.NEVER;
  });

export const fleetSchema = z
  .object({
    maxConcurrentEvacuations: budget()
      .default(1)
      .describe(
        'cluster-wide budget: how many nodes may be Evacuating at once; an integer, or a percentage ("10%") of the nodes running the agent (the DaemonSet\'s desiredNumberScheduled), rounded down, at least 1; 0: no limit',
      ),
    namespace: z
      .string()
      .min(1)
      .default('drainer')
      .describe('namespace of the slot Leases drainer-evacuation-<i> (POD_NAMESPACE)'),
    leaseDuration: duration()
      .default(30)
      .describe('a slot whose holder has not renewed it for this long may be taken by another node'),
    daemonSet: z
      .string()
      .min(1)
      .default('drainer')
      .describe('the agent DaemonSet in the namespace, counted for percentage budgets'),
  })
  .strict();

export const serverSchema = z
  .object({
    enabled: z.boolean().default(true).describe('serve /healthz, /readyz and /metrics'),
    bindAddress: z.string().default('0.0.0.0').describe('address of the health and metrics server'),
    port: z.number().int().min(0).max(65535).default(8080).describe('port of the health and metrics server'),
  })
  .strict();

export const configSchema = z
  .object({
    nodeName: z.string().min(1).optional().describe('node to act on (NODE_NAME)'),
    logLevel: logLevel.default('info').describe('log level (--log-level)'),
    dryRun: z.boolean().default(false).describe('plan and log, change nothing (--dry-run)'),
    kubeconfig: z.string().optional().describe('kubeconfig path (KUBECONFIG)'),
    resyncInterval: duration().default(300).describe('periodic re-check of the node, so missed events heal'),
    server: serverSchema.default(serverSchema.parse({})),
    evacuation: evacuationSchema.default(evacuationSchema.parse({})),
    drain: drainSchema.default(drainSchema.parse({})),
    nodeMaintenance: nodeMaintenanceSchema.default(nodeMaintenanceSchema.parse({})),
    fleet: fleetSchema.default(fleetSchema.parse({})),
    openstack: openstackSchema.default(openstackSchema.parse({})),
    nova: novaSchema.default(novaSchema.parse({})),
    kubevirt: kubevirtSchema.default(kubevirtSchema.parse({})),
  })
  .strict();

export type Config = z.output<typeof configSchema>;
export type OpenStackConfig = Config['openstack'];
export type NovaConfig = Config['nova'];
export type KubevirtConfig = Config['kubevirt'];
export type DrainConfig = Config['drain'];
export type FleetConfig = Config['fleet'];
