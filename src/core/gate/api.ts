// The drain gate's narrow port: the core says "held" or "released" for a node and looks at what the
// API server has; kube-port.ts does it with a PodDisruptionBudget and a pod in drainer's namespace
// (tests may pass an in-memory one).
import type { KubeObject } from '../../kube/types.ts';

/** A node's gate objects as the API server has them (absent: not found). */
export interface GateObjects {
  readonly pdb?: KubeObject | undefined;
  readonly pod?: KubeObject | undefined;
  /** The node's gate objects under an older version's names, still there (an upgrade): released with the gate. */
  readonly legacy?: readonly KubeObject[] | undefined;
  /**
   * The PDB is not owned by the agent DaemonSet the agent knows: that one was deleted with
   * `--cascade=orphan` (the garbage collector took it off) or re-created since. adopt() gives it to
   * the DaemonSet there now, so that uninstalling it takes the gate along.
   */
  readonly unowned?: boolean | undefined;
}

export interface GateApi {
  /** Reads the node's PDB and gate pod. */
  look(node: string): Promise<GateObjects>;
  /**
   * Makes the PDB (its spec restored if altered) and the gate pod (with its finalizer, controlled
   * by the PDB) exist. A pod being deleted is left to go: a new one is made once it is gone.
   */
  hold(node: string): Promise<void>;
  /** Drops the gate pod's finalizer and deletes it (its PDB stays, guarding nothing). True if a pod was there. */
  release(node: string): Promise<boolean>;
  /** Is the agent DaemonSet that owned the PDBs at start now gone or being deleted (an uninstall)? */
  uninstalled?(): Promise<boolean>;
  /** Gives the node's PDB to the agent DaemonSet there now; nothing while there is none, or it is being deleted. */
  adopt?(node: string): Promise<void>;
  /**
   * Is an agent expected on the node after this one: the agent DaemonSet exists, is not being
   * deleted, and its pod template still selects the node (nodeSelector, required node affinity)?
   */
  successorExpected?(node: string): Promise<boolean>;
  /** Removes the node's gate whole: its pods (finalizer first), then its PDB. */
  drop?(node: string): Promise<void>;
}
