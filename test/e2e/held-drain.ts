// A `kubectl drain` of node-a that drainer's gate holds, and when node-a's last server left: the
// gate's promise is that the drain returns only after that.
import type { OpenStackState } from '../../src/sandbox/openstack/index.ts';
import { kubectl } from '../daemonset/kubectl.ts';
import { until } from './stack.ts';

export const KUBECTL_DRAIN = [
  'drain',
  'node-a',
  '--ignore-daemonsets',
  '--delete-emptydir-data',
  '--force',
  '--timeout=180s',
];

export interface LastLeft {
  /** When node-a's last server left (Date.now()), 0 until then. */
  readonly at: () => number;
  /** Stops watching Nova's state. */
  readonly off: () => void;
}

/** Watches Nova's state for the moment node-a holds no server any more. */
export function lastLeft(os: OpenStackState): LastLeft {
  let at = 0;
  const off = os.subscribe(() => {
    if (!at && os.serversOnHost('node-a').length === 0) at = Date.now();
  });
  return { at: () => at, off };
}

export interface HeldDrain {
  /** kubectl's answer; the watch of Nova's state stops when it comes. */
  readonly done: Promise<{ code: number; stdout: string; stderr: string }>;
  /** When kubectl returned (Date.now()), 0 while it waits. */
  readonly returned: () => number;
  /** When node-a's last server left, 0 until then. */
  readonly lastLeft: () => number;
}

/** Starts `kubectl drain node-a` (kubectl's own flags, 180 s timeout) with the watch of node-a's last server. */
export function heldDrain(os: OpenStackState, kubeconfig: string): HeldDrain {
  const left = lastLeft(os);
  let returned = 0;
  const done = kubectl(['--kubeconfig', kubeconfig, ...KUBECTL_DRAIN]).then((r) => {
    returned = Date.now();
    left.off();
    return r;
  });
  return { done, returned: () => returned, lastLeft: left.at };
}

/** Until Nova has been asked to move `n` of its servers. */
export const migrationsStarted = (os: OpenStackState, n: number) =>
  until(
    `${n} migrations started`,
    () => os.servers().filter((v) => os.migrateCalls(v.id) > 0).length >= n,
    30_000,
  );
