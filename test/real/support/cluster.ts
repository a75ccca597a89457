// What the cases read from and do to the real cluster: the node and drainer's record on it, the agent and its
// drain gate, cordon and drains, all through kubectl.
import { gateName } from '../../../src/kube/gate.ts';
import { waitFor } from '../../functional/support/wait.ts';
import type { RealEnv } from './env.ts';
import type { Background, Kubectl, Obj } from './kubectl.ts';
import { NAMESPACE } from './overlay.ts';

export const RECORD = 'drainer.dev/state';
export { gateName };

export interface Record {
  phase?: string;
  [k: string]: unknown;
}

export interface GateState {
  pod?: { phase: string; ready: boolean; uid: string; terminating: boolean };
  pdb?: { disruptionsAllowed: number; currentHealthy: number; expectedPods: number; observed: boolean };
}

export class Cluster {
  readonly env: RealEnv;
  readonly k: Kubectl;

  constructor(env: RealEnv, k: Kubectl) {
    this.env = env;
    this.k = k;
  }

  async node(): Promise<Obj> {
    const n = await this.k.get(['node', this.env.node]);
    if (!n) throw new Error(`node ${this.env.node} does not exist`);
    return n;
  }

  /** drainer's record on the node, or undefined while the node is in service. */
  async record(): Promise<Record | undefined> {
    const text = (await this.node()).metadata.annotations?.[RECORD];
    return text ? (JSON.parse(text) as Record) : undefined;
  }

  async phase(): Promise<string | undefined> {
    return (await this.record())?.phase;
  }

  async waitPhase(phase: string | undefined, timeoutMs = 300_000): Promise<void> {
    let last: string | undefined;
    await waitFor(
      async () => ((last = await this.phase()) === phase ? true : undefined),
      { what: `node ${this.env.node} phase ${phase ?? '(in service)'}`, timeoutMs, intervalMs: 500 },
      () => `phase ${last ?? '(in service)'}`,
    );
  }

  /** The agent pods (the DaemonSet's), newest first. */
  async agents(): Promise<Obj[]> {
    const list = await this.k.get([
      'pods',
      '-n',
      NAMESPACE,
      '-l',
      'app.kubernetes.io/name=drainer,!app.kubernetes.io/component',
    ]);
    return ((list?.items ?? []) as Obj[]).sort((a, b) =>
      String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)),
    );
  }

  /** The one agent pod that is Ready and not terminating, or undefined (Obj admits it). */
  async readyAgent(): Promise<Obj> {
    return (await this.agents()).find((p) => !p.metadata.deletionTimestamp && isReady(p));
  }

  async gate(): Promise<GateState> {
    const name = gateName(this.env.node);
    const [pod, pdb] = await Promise.all([
      this.k.get(['pod', '-n', NAMESPACE, name]),
      this.k.get(['pdb', '-n', NAMESPACE, name]),
    ]);
    return {
      ...(pod
        ? {
            pod: {
              phase: pod.status?.phase,
              ready: isReady(pod),
              uid: pod.metadata.uid,
              terminating: Boolean(pod.metadata.deletionTimestamp),
            },
          }
        : {}),
      ...(pdb
        ? {
            pdb: {
              disruptionsAllowed: pdb.status?.disruptionsAllowed ?? -1,
              currentHealthy: pdb.status?.currentHealthy ?? -1,
              expectedPods: pdb.status?.expectedPods ?? -1,
              observed: pdb.status?.observedGeneration === pdb.metadata.generation,
            },
          }
        : {}),
    };
  }

  /** Held as the API server shows it: the pod Running and Ready, its PDB observed allowing no disruption. */
  static held(g: GateState): boolean {
    return Boolean(
      g.pod?.phase === 'Running' &&
      g.pod.ready &&
      !g.pod.terminating &&
      g.pdb?.observed &&
      g.pdb.disruptionsAllowed === 0 &&
      g.pdb.currentHealthy === 1,
    );
  }

  async waitGateHeld(timeoutMs = 120_000): Promise<GateState> {
    let last: GateState = {};
    return waitFor(
      async () => (Cluster.held((last = await this.gate())) ? last : undefined),
      { what: `the drain gate of ${this.env.node} to hold`, timeoutMs, intervalMs: 500 },
      () => JSON.stringify(last),
    );
  }

  cordon = () => this.k.ok(['cordon', this.env.node]);
  uncordon = () => this.k.ok(['uncordon', this.env.node]);

  /** `kubectl drain` as fleet tools run it, in the background; extra flags such as --disable-eviction. */
  drain(...extra: string[]): Background {
    return this.k.start([
      'drain',
      this.env.node,
      '--ignore-daemonsets',
      '--delete-emptydir-data',
      '--timeout=900s',
      ...extra,
    ]);
  }

  /** The node back in service: uncordoned, the record gone, the gate held again. */
  async backInService(): Promise<void> {
    await this.uncordon();
    await this.waitPhase(undefined);
    await this.waitGateHeld();
  }

  /** After a case: uncordoned and in service (no-op when it already is). */
  async ensureInService(): Promise<void> {
    if ((await this.node()).spec.unschedulable) await this.uncordon();
    // without an agent (drainer not installed) nobody restores: the next install does
    if ((await this.record()) !== undefined && (await this.agents()).length > 0)
      await this.waitPhase(undefined, 180_000);
  }

  /** The agent container's working set from the kubelet's summary API, in bytes. */
  async agentWorkingSet(): Promise<number | undefined> {
    const summary = await this.k.raw(`/api/v1/nodes/${this.env.node}/proxy/stats/summary`);
    const pod = (summary.pods as Obj[]).find(
      (p) => p.podRef.namespace === NAMESPACE && /^drainer-(?!gate-)/.test(p.podRef.name),
    );
    const c = (pod?.containers as Obj[] | undefined)?.find((x) => x.name === 'drainer');
    return c?.memory?.workingSetBytes as number | undefined;
  }
}

export const isReady = (p: Obj): boolean =>
  p.status?.phase === 'Running' &&
  ((p.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'Ready' && c.status === 'True');
