// What the real API server fills in on an HTTP create of the built-in kinds drainer reads:
// the scheme's defaults (pods, nodes, core/v1 events), DefaultTolerationSeconds admission and the
// pod's QoS class. Objects a scenario seeds through the store are taken as already stored.
import type { ResourceType } from './resources.ts';
import type { KubeObject } from './types.ts';

type Obj = Record<string, unknown>;

interface Container {
  image?: string;
  resources?: { requests?: Obj; limits?: Obj };
  [k: string]: unknown;
}

function containerDefaults(c: Container): Container {
  const tag = c.image?.split('/').pop()?.split('@')[0]?.split(':')[1];
  return {
    resources: {},
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    imagePullPolicy: !tag || tag === 'latest' ? 'Always' : 'IfNotPresent',
    ...c,
  };
}

/** BestEffort without any request or limit; Guaranteed when every container's limits equal its requests. */
function qosClass(containers: Container[]): string {
  const all = containers.map((c) => ({ req: c.resources?.requests ?? {}, lim: c.resources?.limits ?? {} }));
  if (all.every(({ req, lim }) => !Object.keys(req).length && !Object.keys(lim).length)) return 'BestEffort';
  const guaranteed = all.every(
    ({ req, lim }) =>
      ['cpu', 'memory'].every((r) => lim[r] !== undefined) &&
      Object.entries(req).every(([r, v]) => String(lim[r]) === String(v)),
  );
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

// DefaultTolerationSeconds admission: pods ride out a not-ready or unreachable node for 5 minutes.
const defaultTolerations = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'].map((key) => ({
  key,
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds: 300,
}));

function podDefaults(pod: KubeObject): KubeObject {
  const spec = (pod.spec ?? {}) as Obj & { containers?: Container[]; tolerations?: { key?: string }[] };
  const containers = (spec.containers ?? []).map(containerDefaults);
  const sa = (spec.serviceAccountName as string | undefined) ?? 'default';
  const tolerations = [...(spec.tolerations ?? [])];
  for (const t of defaultTolerations) {
    if (!tolerations.some((have) => have.key === t.key)) tolerations.push(t);
  }
  return {
    ...pod,
    spec: {
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      securityContext: {},
      schedulerName: 'default-scheduler',
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
      ...spec,
      containers,
      serviceAccountName: sa,
      serviceAccount: sa,
      tolerations,
    },
    status: { phase: 'Pending', qosClass: qosClass(containers) },
  };
}

function nodeDefaults(node: KubeObject): KubeObject {
  const status = (node.status ?? {}) as Obj;
  const info = ['machineID', 'systemUUID', 'bootID', 'kernelVersion', 'osImage', 'containerRuntimeVersion'];
  const more = ['kubeletVersion', 'kubeProxyVersion', 'operatingSystem', 'architecture'];
  return {
    ...node,
    spec: node.spec ?? {},
    status: {
      daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
      nodeInfo: Object.fromEntries([...info, ...more].map((k) => [k, ''])),
      ...status,
    },
  };
}

function eventDefaults(ev: KubeObject): KubeObject {
  return { eventTime: null, reportingComponent: '', reportingInstance: '', ...ev };
}

/** The object as the real server would store it from this create request. */
export function withCreateDefaults(rt: ResourceType, obj: KubeObject): KubeObject {
  if (rt.id === 'pods') return podDefaults(obj);
  if (rt.id === 'nodes') return nodeDefaults(obj);
  if (rt.id === 'events') return eventDefaults(obj);
  return obj;
}
