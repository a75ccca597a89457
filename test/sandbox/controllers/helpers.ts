// Shared arrange/act helpers for the controller tests: a small scenario on a fast clock.
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import type { ScenarioInput } from '../../../src/sandbox/scenario.ts';
import type { KubeObject } from '../../../src/sandbox/kube/types.ts';

export const VMI = 'virtualmachineinstances.kubevirt.io';
export const VMIM = 'virtualmachineinstancemigrations.kubevirt.io';

export const nodes = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `node-${i + 1}` }));

/** A sandbox of `scenario` at 50× speed; only the named controllers run when `only` is given. */
export async function sandbox(
  scenario: Partial<ScenarioInput>,
  only?: ('kubelet' | 'replicaset' | 'disruption' | 'nodeLifecycle' | 'kubevirt')[],
): Promise<Sandbox> {
  const all = ['kubelet', 'replicaset', 'disruption', 'nodeLifecycle', 'kubevirt'] as const;
  const controllers = only ? Object.fromEntries(all.map((c) => [c, only.includes(c)])) : undefined;
  return startSandbox({
    scenario: { nodes: nodes(3), ...scenario },
    scale: 50,
    ...(controllers ? { controllers } : {}),
  });
}

/** Polls until `check` returns a value other than undefined/false (fails after `ms`). */
export async function waitFor<T>(check: () => T | undefined | false, ms = 8000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > until) throw new Error(`condition not met within ${ms} ms: ${check.toString()}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** POSTs a policy/v1 Eviction through the API server, as kubectl drain does. */
export async function evict(
  sb: Sandbox,
  ns: string,
  name: string,
): Promise<{ code: number; body: KubeObject }> {
  const res = await fetch(`${sb.kube.url}/api/v1/namespaces/${ns}/pods/${name}/eviction`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: ns } }),
  });
  return { code: res.status, body: (await res.json()) as KubeObject };
}

export const podsOn = (sb: Sandbox, node: string, selector?: string): KubeObject[] =>
  sb.kube.store.list('pods', {
    fieldSelector: `spec.nodeName=${node}`,
    ...(selector ? { labelSelector: selector } : {}),
  });

export const taint = (sb: Sandbox, node: string, key: string, effect = 'NoSchedule') => {
  const n = sb.kube.store.get('nodes', undefined, node);
  const spec = (n.spec ?? {}) as { taints?: unknown[] };
  n.spec = { ...spec, taints: [...(spec.taints ?? []), { key, effect }] };
  sb.kube.store.update('nodes', n);
};

export const cordon = (sb: Sandbox, node: string, on = true) =>
  sb.kube.store.patch('nodes', undefined, node, 'application/merge-patch+json', {
    spec: { unschedulable: on },
  });

export const vmi = (sb: Sandbox, name: string, ns = 'vms') => sb.kube.store.get(VMI, ns, name);
export const statusOf = (o: KubeObject) => (o.status ?? {}) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
