// The demo's fleet act: a second, small sandbox. Two hypervisors of one rack with two servers each,
// cordoned together, and a spare host with room for all four. No KubeVirt and no pods: the act is
// about the budget, and it stays a few seconds long.
import type { ScenarioInput } from '../sandbox/index.ts';

/** The nodes cordoned at once. */
export const FLEET_RACK = ['rack-1', 'rack-2'] as const;

const server = (name: string, host: string, ramMb: number) => ({ name, project: 'delta', host, ramMb });

export const fleetScenario: ScenarioInput = {
  name: 'fleet',
  description: '2 hypervisors with 2 servers each, cordoned at once, and a spare host',
  timings: { podStartSeconds: 1, migrationStepSeconds: 0.5 },
  nodes: [{ name: 'rack-1' }, { name: 'rack-2' }, { name: 'spare-1' }],
  openstack: {
    migrationSeconds: 5,
    hosts: [
      { name: 'rack-1', maxConcurrentLiveMigrations: 2 },
      { name: 'rack-2', maxConcurrentLiveMigrations: 2 },
      // the most free RAM: Nova's RAM weigher sends rack-1's servers here, not to rack-2, whose
      // nova-compute stays enabled while it waits Queued (nothing changes on a queued node)
      { name: 'spare-1', ramMb: 262144, maxConcurrentLiveMigrations: 2 },
    ],
    servers: [
      server('delta-web-1', 'rack-1', 4096),
      server('delta-db-1', 'rack-1', 8192),
      server('delta-web-2', 'rack-2', 4096),
      server('delta-cache-1', 'rack-2', 2048),
    ],
  },
  kubevirt: { installed: false },
  daemonsets: [{ name: 'node-agent', namespace: 'kube-system' }],
};
