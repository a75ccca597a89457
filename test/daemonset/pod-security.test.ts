// drainer may create pods in its namespace (the drain gates), so the namespace enforces Pod Security
// `restricted`, and both pods drainer brings there comply: the agent DaemonSet's and the gate pod.
// The rules are the restricted profile's (kubernetes.io/docs/concepts/security/pod-security-standards).
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { gatePod } from '../../src/kube/gate.ts';

interface Container {
  name: string;
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    runAsNonRoot?: boolean;
    privileged?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
    seccompProfile?: { type?: string };
  };
  ports?: { hostPort?: number }[];
}
interface PodSpec {
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type?: string } };
  containers: Container[];
  initContainers?: Container[];
  volumes?: Record<string, unknown>[];
}

const ALLOWED_VOLUMES = new Set([
  'name',
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);

/** What the restricted profile refuses in one container (pod-level defaults applied). */
function containerViolations(c: Container, podNonRoot: boolean, podSeccomp: string | undefined): string[] {
  const out: string[] = [];
  const sc = c.securityContext ?? {};
  if (sc.privileged) out.push(`${c.name}: privileged`);
  if (sc.allowPrivilegeEscalation !== false) out.push(`${c.name}: allowPrivilegeEscalation not false`);
  if (!(sc.runAsNonRoot ?? podNonRoot)) out.push(`${c.name}: runAsNonRoot not true`);
  const seccomp = sc.seccompProfile?.type ?? podSeccomp;
  if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') out.push(`${c.name}: seccomp ${seccomp}`);
  if (!sc.capabilities?.drop?.includes('ALL')) out.push(`${c.name}: capabilities not dropping ALL`);
  for (const a of sc.capabilities?.add ?? []) if (a !== 'NET_BIND_SERVICE') out.push(`${c.name}: adds ${a}`);
  if ((c.ports ?? []).some((p) => p.hostPort)) out.push(`${c.name}: hostPort`);
  return out;
}

/** What the restricted profile refuses in a pod spec, one line each (empty: it complies). */
function restrictedViolations(spec: PodSpec): string[] {
  const out: string[] = [];
  if (spec.hostNetwork || spec.hostPID || spec.hostIPC) out.push('host namespaces');
  for (const v of spec.volumes ?? [])
    for (const k of Object.keys(v)) if (!ALLOWED_VOLUMES.has(k)) out.push(`volume type ${k}`);
  if (spec.securityContext?.runAsUser === 0) out.push('runAsUser 0');
  const nonRoot = spec.securityContext?.runAsNonRoot === true;
  const seccomp = spec.securityContext?.seccompProfile?.type;
  for (const c of [...spec.containers, ...(spec.initContainers ?? [])])
    out.push(...containerViolations(c, nonRoot, seccomp));
  return out;
}

const load = <T>(file: string): T => yaml.load(readFileSync(`daemonset/${file}`, 'utf8')) as T;

describe('Pod Security restricted in drainer namespace', () => {
  it('the namespace enforces restricted', () => {
    const ns = load<{ metadata: { labels: Record<string, string> } }>('namespace.yaml');
    expect(ns.metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it('the agent DaemonSet complies', () => {
    const ds = load<{ spec: { template: { spec: PodSpec } } }>('daemonset.yaml');
    expect(restrictedViolations(ds.spec.template.spec)).toEqual([]);
  });

  it('the drain gate pod complies (and has a read-only root file system)', () => {
    const spec = gatePod('drainer', 'node-7', 'pause', {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      name: 'drainer-gate-node-7',
      uid: 'u',
      controller: true,
    }).spec as PodSpec;
    expect(restrictedViolations(spec)).toEqual([]);
    expect(spec.containers[0]?.securityContext).toMatchObject({ readOnlyRootFilesystem: true });
  });

  it('the check is real: a privileged, root, hostPath pod is refused on each count', () => {
    const bad: PodSpec = {
      hostNetwork: true,
      securityContext: { runAsUser: 0 },
      volumes: [{ name: 'h', hostPath: { path: '/' } }],
      containers: [
        { name: 'c', securityContext: { privileged: true, capabilities: { add: ['SYS_ADMIN'] } } },
      ],
    };
    expect(restrictedViolations(bad)).toEqual([
      'host namespaces',
      'volume type hostPath',
      'runAsUser 0',
      'c: privileged',
      'c: allowPrivilegeEscalation not false',
      'c: runAsNonRoot not true',
      'c: seccomp undefined',
      'c: capabilities not dropping ALL',
      'c: adds SYS_ADMIN',
    ]);
  });
});
