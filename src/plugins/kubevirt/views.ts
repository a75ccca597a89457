// The fields of Nodes and Pods that the KubeVirt capacity check reads (shared by the port and the check).

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: string;
}

export interface Resources {
  requests?: Record<string, string>;
}

/** The fields of a Pod the check reads. */
export interface PodSpecView {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    deletionTimestamp?: string;
  };
  spec?: {
    nodeName?: string;
    nodeSelector?: Record<string, string>;
    tolerations?: Toleration[];
    containers?: { resources?: Resources }[];
    initContainers?: { resources?: Resources }[];
    overhead?: Record<string, string>;
  };
  status?: { phase?: string };
}

/** The fields of a Node the check reads. */
export interface NodeView {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { unschedulable?: boolean; taints?: Taint[] };
  status?: { allocatable?: Record<string, string>; conditions?: { type: string; status: string }[] };
}
