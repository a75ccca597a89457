// The drain gate's narrow port: the core says "held" or "released" for a node; kube-port.ts does it
// with a PodDisruptionBudget and a pod in drainer's namespace (tests may pass an in-memory one).

export interface GateApi {
  /** Makes sure the PDB and the gate pod exist, so every eviction of the pod is answered 429. */
  hold(node: string): Promise<void>;
  /** Deletes the gate pod (its PDB stays, guarding nothing): drains pass. True if a pod was there. */
  release(node: string): Promise<boolean>;
}
