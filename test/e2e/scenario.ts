// A small world for the scenario tests: node-a holds five Nova servers and some pods, node-b is
// where everything can go. Timings are simulated seconds (the stack runs the clock 20× faster).

export function smallWorld(
  opts: { servers?: number; migrationSeconds?: number; faults?: object; extra?: object } = {},
) {
  const n = opts.servers ?? 5;
  return {
    name: 'e2e',
    clock: { scale: 20 },
    timings: { podStartSeconds: 1 },
    nodes: [{ name: 'node-a' }, { name: 'node-b' }],
    openstack: {
      migrationSeconds: opts.migrationSeconds ?? 10,
      hosts: [
        { name: 'node-a', maxConcurrentLiveMigrations: 1 },
        { name: 'node-b', maxConcurrentLiveMigrations: 1 },
      ],
      servers: Array.from({ length: n }, (_, i) => ({
        name: `vm-${i + 1}`,
        project: 'alpha',
        host: 'node-a',
      })),
      ...(opts.faults ? { faults: opts.faults } : {}),
    },
    kubevirt: { installed: false },
    daemonsets: [{ name: 'node-agent', namespace: 'kube-system' }],
    replicasets: [{ name: 'web', namespace: 'shop', replicas: 4, labels: { app: 'web' } }],
    ...opts.extra,
  };
}

export const NM_PATH = '/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances';

export const nodeMaintenance = (name: string, nodeName: string) => ({
  apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
  kind: 'NodeMaintenance',
  metadata: { name },
  spec: { nodeName, reason: 'kernel upgrade' },
});

/** `racked` hypervisors r1…rN with `per` servers each, and two empty ones to take them (fleet stories). */
export function rack(racked: number, per: number, migrationSeconds = 10) {
  const names = Array.from({ length: racked }, (_, i) => `r${i + 1}`);
  const hosts = [...names, 'spare-1', 'spare-2'];
  return {
    name: 'fleet',
    clock: { scale: 20 },
    timings: { podStartSeconds: 1 },
    nodes: hosts.map((name) => ({ name })),
    openstack: {
      migrationSeconds,
      hosts: hosts.map((name) => ({ name, maxConcurrentLiveMigrations: 2 })),
      servers: names.flatMap((host) =>
        Array.from({ length: per }, (_, i) => ({ name: `${host}-vm${i + 1}`, project: 'alpha', host })),
      ),
    },
    kubevirt: { installed: false },
    daemonsets: [{ name: 'node-agent', namespace: 'kube-system' }],
  };
}
