// One resource's objects with the indexes lists need (namespace; node for pods), a bounded
// history of changes for watches that resume from a resourceVersion, and live listeners.
import type { ResourceType } from './resources.ts';
import type { KubeObject, WatchEventType } from './types.ts';

export interface ChangeEvent {
  readonly type: WatchEventType;
  readonly obj: KubeObject;
  /** The object before a MODIFIED (for selector transitions). */
  readonly prev: KubeObject | undefined;
  readonly rv: number;
  /** `obj` serialized once, shared by every watch stream. */
  json?: string;
}

export type ChangeListener = (e: ChangeEvent) => void;

export const objectKey = (namespace: string | undefined, name: string): string =>
  namespace ? `${namespace}/${name}` : name;

const nodeOf = (o: KubeObject): string | undefined => (o.spec as { nodeName?: string } | undefined)?.nodeName;

export class Bucket {
  readonly rt: ResourceType;
  readonly objects = new Map<string, KubeObject>();
  readonly listeners = new Set<ChangeListener>();
  readonly #byNamespace = new Map<string, Set<string>>();
  readonly #byNode = new Map<string, Set<string>>();
  #sorted: string[] | undefined;
  readonly #sortedByNamespace = new Map<string, string[]>();
  #history: ChangeEvent[] = [];
  #historyStart = 0;
  readonly #historyCap: number;
  /** Every change with rv > floor is still in the history; older resourceVersions are too old. */
  floor = 0;

  constructor(rt: ResourceType, historyCap: number) {
    this.rt = rt;
    this.#historyCap = historyCap;
  }

  put(key: string, obj: KubeObject): void {
    const prev = this.objects.get(key);
    if (!prev) {
      this.#sorted = undefined;
      this.#sortedByNamespace.delete(obj.metadata.namespace ?? '');
    }
    if (prev && this.rt.id === 'pods') this.#unindexNode(key, prev);
    this.objects.set(key, obj);
    const ns = obj.metadata.namespace ?? '';
    let set = this.#byNamespace.get(ns);
    if (!set) this.#byNamespace.set(ns, (set = new Set()));
    set.add(key);
    if (this.rt.id === 'pods') {
      const node = nodeOf(obj) ?? '';
      let nodeSet = this.#byNode.get(node);
      if (!nodeSet) this.#byNode.set(node, (nodeSet = new Set()));
      nodeSet.add(key);
    }
  }

  remove(key: string): KubeObject | undefined {
    const prev = this.objects.get(key);
    if (!prev) return undefined;
    this.objects.delete(key);
    this.#sorted = undefined;
    this.#sortedByNamespace.delete(prev.metadata.namespace ?? '');
    this.#byNamespace.get(prev.metadata.namespace ?? '')?.delete(key);
    if (this.rt.id === 'pods') this.#unindexNode(key, prev);
    return prev;
  }

  #unindexNode(key: string, obj: KubeObject): void {
    const node = nodeOf(obj) ?? '';
    const set = this.#byNode.get(node);
    set?.delete(key);
    if (set?.size === 0) this.#byNode.delete(node);
  }

  /** Keys in etcd order (namespace/name), narrowed by the cheapest index that applies. */
  keys(opts: { namespace?: string; nodeName?: string }): string[] {
    if (opts.nodeName !== undefined && this.rt.id === 'pods') {
      const set = this.#byNode.get(opts.nodeName);
      const keys = set ? [...set] : [];
      return (
        opts.namespace ? keys.filter((k) => this.objects.get(k)?.metadata.namespace === opts.namespace) : keys
      ).sort();
    }
    if (opts.namespace) {
      let keys = this.#sortedByNamespace.get(opts.namespace);
      if (!keys) {
        keys = [...(this.#byNamespace.get(opts.namespace) ?? [])].sort();
        this.#sortedByNamespace.set(opts.namespace, keys);
      }
      return keys;
    }
    this.#sorted ??= [...this.objects.keys()].sort();
    return this.#sorted;
  }

  /** Keeps `e` for watches that resume later; listeners hear of it through `notify`. */
  remember(e: ChangeEvent): void {
    this.#history.push(e);
    if (this.#history.length - this.#historyStart > this.#historyCap) {
      const dropped = this.#history[this.#historyStart];
      if (dropped) this.floor = dropped.rv;
      this.#historyStart++;
      if (this.#historyStart > this.#historyCap) {
        this.#history = this.#history.slice(this.#historyStart);
        this.#historyStart = 0;
      }
    }
  }

  notify(e: ChangeEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch (err) {
        // A failing in-process subscriber must not fail the write that triggered it.
        process.emitWarning(`sandbox store listener failed: ${(err as Error).message}`);
      }
    }
  }

  /** Changes after `rv`, or undefined when the history no longer reaches back that far. */
  since(rv: number): ChangeEvent[] | undefined {
    if (rv < this.floor) return undefined;
    const out: ChangeEvent[] = [];
    for (let i = this.#history.length - 1; i >= this.#historyStart; i--) {
      const e = this.#history[i];
      if (!e || e.rv <= rv) break;
      out.push(e);
    }
    return out.reverse();
  }

  compact(rv: number): void {
    this.#history = [];
    this.#historyStart = 0;
    this.floor = rv;
  }
}
