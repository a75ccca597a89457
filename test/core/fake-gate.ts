// An in-memory drain gate (GateApi) for the core's tests: one PDB and one gate pod per node, with
// the finalizer, the PDB's ownership and the pod's start as the API server and the kubelet show them.
import type { GateApi, GateObjects } from '../../src/core/gate/api.ts';
import { GATE_FINALIZER, gateName, gatePdbSpec } from '../../src/kube/gate.ts';
import type { KubeObject } from '../../src/kube/types.ts';

export class FakeGateApi implements GateApi {
  readonly objs = new Map<string, GateObjects>();
  /** Every call, in order ('hold n1', 'release n1'). */
  readonly calls: string[] = [];
  /** A new gate pod is Running and Ready at once (false: Pending until run()). */
  startsRunning = true;
  /** The agent DaemonSet is gone (an uninstall). */
  daemonSetGone = false;
  /** A release reaches the API server this late (ms): observations of it arrive after later wishes. */
  slowReleaseMs = 0;
  #uid = 1;

  async look(node: string): Promise<GateObjects> {
    return structuredClone(this.objs.get(node) ?? {});
  }

  async hold(node: string): Promise<void> {
    this.calls.push(`hold ${node}`);
    if (this.daemonSetGone) return;
    const o = this.objs.get(node) ?? {};
    const pdb = o.pdb ?? this.#pdb(node);
    let pod = o.pod;
    if (!pod || pod.metadata.deletionTimestamp) pod = this.#pod(node, pdb);
    else if (!(pod.metadata.finalizers ?? []).includes(GATE_FINALIZER))
      pod = { ...pod, metadata: { ...pod.metadata, finalizers: [GATE_FINALIZER] } };
    this.objs.set(node, { pdb, pod });
  }

  async release(node: string): Promise<boolean> {
    this.calls.push(`release ${node}`);
    if (this.slowReleaseMs) await new Promise((r) => setTimeout(r, this.slowReleaseMs));
    const o = this.objs.get(node) ?? {};
    this.objs.set(node, { pdb: o.pdb });
    return o.pod !== undefined;
  }

  async uninstalled(): Promise<boolean> {
    return this.daemonSetGone;
  }

  /** The node's gate pod starts (Running and Ready). */
  run(node: string): void {
    const o = this.objs.get(node);
    if (o?.pod) o.pod.status = running;
  }

  /** `kubectl delete pod` of the gate pod: its finalizer keeps it, being deleted. */
  deletePod(node: string): void {
    const o = this.objs.get(node);
    if (!o?.pod) return;
    if ((o.pod.metadata.finalizers ?? []).length) o.pod.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    else this.objs.set(node, { pdb: o.pdb });
  }

  deletePdb(node: string): void {
    const o = this.objs.get(node);
    if (o) this.objs.set(node, { pod: o.pod });
  }

  /** Does the gate guard the node (a pod with our finalizer, or a PDB over a Running pod)? */
  guards(node: string): boolean {
    const o = this.objs.get(node);
    return !!o?.pod && (o.pod.metadata.finalizers ?? []).includes(GATE_FINALIZER);
  }

  #pdb(node: string): KubeObject {
    return {
      metadata: { name: gateName(node), uid: `pdb-${this.#uid++}`, generation: 1 },
      spec: gatePdbSpec(node),
      status: { observedGeneration: 1, disruptionsAllowed: 0 },
    };
  }

  #pod(node: string, pdb: KubeObject): KubeObject {
    return {
      metadata: {
        name: gateName(node),
        uid: `pod-${this.#uid++}`,
        finalizers: [GATE_FINALIZER],
        ownerReferences: [
          {
            apiVersion: 'policy/v1',
            kind: 'PodDisruptionBudget',
            name: pdb.metadata.name ?? '',
            uid: pdb.metadata.uid ?? '',
            controller: true,
          },
        ],
      },
      spec: { nodeName: node },
      status: this.startsRunning ? running : { phase: 'Pending' },
    };
  }
}

const running = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
