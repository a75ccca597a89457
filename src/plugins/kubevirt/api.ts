// The KubevirtApi port over the project's Kubernetes client (src/kube).
import { isNotFoundError } from '../../errors.ts';
import type { KubeClients } from '../../kube/client.ts';
import { errorForStatus } from '../../kube/errors.ts';
import { addTaint, getNode, removeTaint } from '../../kube/node.ts';
import type { NodeView, PodSpecView } from './views.ts';
import type { CreateAnswer, EvictionAnswer, KubevirtApi } from './port.ts';
import type { KubeVirtCr, PodLite, Vmi, Vmim, VmLite } from './types.ts';
import { STOP_MARK_ANNOTATION, STOP_MARK_LABEL } from './vm-mark.ts';

const KV = '/apis/kubevirt.io/v1';
const SUBRESOURCES = '/apis/subresources.kubevirt.io/v1';
const CANCEL = 'virtualmachineinstances/evacuate/cancel';

interface List<T> {
  items?: T[];
  metadata?: { continue?: string };
}

/** KubeVirt answers 429 with these when an eviction started (or continues) an evacuation. */
const TRIGGERED = /Eviction triggered evacuation|Evacuation in progress/i;

export function kubevirtApi(k: KubeClients): KubevirtApi {
  async function listAll<T>(path: string, query: Record<string, string>, signal: AbortSignal): Promise<T[]> {
    const items: T[] = [];
    let next: string | undefined;
    do {
      const page = await k.request<List<T>>({
        path,
        query: { ...query, limit: 500, continue: next },
        signal,
      });
      items.push(...(page.items ?? []));
      next = page.metadata?.continue || undefined;
    } while (next);
    return items;
  }

  return {
    async listKubeVirts(signal) {
      try {
        return await listAll<KubeVirtCr>(`${KV}/kubevirts`, {}, signal);
      } catch (err) {
        if (isNotFoundError(err)) return undefined; // the CRD is not installed
        throw err;
      }
    },
    listVmis: (node, signal) =>
      listAll<Vmi>(
        `${KV}/virtualmachineinstances`,
        { labelSelector: `kubevirt.io/nodeName=${node}` },
        signal,
      ),
    async getVmi(namespace, name, signal) {
      try {
        return await k.request<Vmi>({
          path: `${KV}/namespaces/${namespace}/virtualmachineinstances/${name}`,
          signal,
        });
      } catch (err) {
        if (isNotFoundError(err)) return undefined;
        throw err;
      }
    },
    listMigrations: (signal) => listAll<Vmim>(`${KV}/virtualmachineinstancemigrations`, {}, signal),
    async deleteMigration(namespace, name, signal) {
      try {
        await k.request({
          method: 'DELETE',
          path: `${KV}/namespaces/${namespace}/virtualmachineinstancemigrations/${name}`,
          signal,
        });
      } catch (err) {
        if (!isNotFoundError(err)) throw err;
      }
    },
    listVmPods: (node, signal) =>
      listAll<PodLite>(
        '/api/v1/pods',
        {
          labelSelector: 'kubevirt.io in (virt-launcher,hotplug-disk)',
          fieldSelector: `spec.nodeName=${node}`,
        },
        signal,
      ),
    async nodeTaints(node, signal) {
      const n = await getNode(k, node, signal);
      return n.spec?.taints ?? [];
    },
    async addTaint(node, taint) {
      await addTaint(k, node, taint);
    },
    async removeTaint(node, key, effect) {
      await removeTaint(k, node, key, effect);
    },
    async evictPod(namespace, name, signal): Promise<EvictionAnswer> {
      const res = await k.send({
        method: 'POST',
        path: `/api/v1/namespaces/${namespace}/pods/${name}/eviction`,
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
        signal,
      });
      if (res.code >= 200 && res.code < 300) return { kind: 'evicted' };
      if (res.code === 404) return { kind: 'gone' };
      const said = (res.body as { message?: unknown } | undefined)?.message;
      const message = typeof said === 'string' ? said : `HTTP ${res.code}`;
      if (res.code === 429 && TRIGGERED.test(message)) return { kind: 'triggered' };
      return { kind: 'refused', message };
    },
    async deletePod(namespace, name, signal) {
      try {
        await k.request({ method: 'DELETE', path: `/api/v1/namespaces/${namespace}/pods/${name}`, signal });
      } catch (err) {
        if (!isNotFoundError(err)) throw err;
      }
    },
    async getVm(namespace, name, signal) {
      try {
        return await k.request<VmLite>({
          path: `${KV}/namespaces/${namespace}/virtualmachines/${name}`,
          signal,
        });
      } catch (err) {
        if (isNotFoundError(err)) return undefined;
        throw err;
      }
    },
    async listMarkedVms(signal) {
      try {
        return await listAll<VmLite>(`${KV}/virtualmachines`, { labelSelector: STOP_MARK_LABEL }, signal);
      } catch (err) {
        if (isNotFoundError(err)) return []; // no VirtualMachine CRD: no VM to have stopped
        throw err;
      }
    },
    async markVm(namespace, name, mark, signal) {
      const path = `${KV}/namespaces/${namespace}/virtualmachines/${name}`;
      const res = await k.send({
        method: 'PATCH',
        path,
        contentType: 'application/merge-patch+json',
        body: {
          metadata: {
            labels: { [STOP_MARK_LABEL]: mark === null ? null : 'true' },
            annotations: { [STOP_MARK_ANNOTATION]: mark },
          },
        },
        signal,
      });
      if (res.code >= 200 && res.code < 300) return 'done';
      if (res.code === 404) return 'gone';
      throw errorForStatus(res.code, res.body ?? {}, 'PATCH', path);
    },
    async vmAction(namespace, name, action, signal) {
      await k.request({
        method: 'PUT',
        path: `${SUBRESOURCES}/namespaces/${namespace}/virtualmachines/${name}/${action}`,
        body: {},
        signal,
      });
    },
    async setRunStrategy(namespace, name, from, to, signal) {
      const path = `${KV}/namespaces/${namespace}/virtualmachines/${name}`;
      const res = await k.send({
        method: 'PATCH',
        path,
        contentType: 'application/json-patch+json',
        body: [
          { op: 'test', path: '/spec/runStrategy', value: from },
          { op: 'replace', path: '/spec/runStrategy', value: to },
        ],
        signal,
      });
      if (res.code >= 200 && res.code < 300) return 'set';
      if (res.code === 404) return 'gone';
      // the test failed: the API server answers 422 (or 409), the strategy is no longer `from`
      if (res.code === 422 || res.code === 409) return 'changed';
      throw errorForStatus(res.code, res.body ?? {}, 'PATCH', path);
    },
    async canCancelEvacuation(signal) {
      try {
        const list = await k.request<{ resources?: { name?: string }[] }>({ path: SUBRESOURCES, signal });
        return (list.resources ?? []).some((r) => r.name === CANCEL);
      } catch (err) {
        if (isNotFoundError(err)) return false; // no virt-api group at all
        throw err;
      }
    },
    async cancelEvacuation(namespace, name, node, signal) {
      await k.request({
        method: 'PUT',
        path: `${SUBRESOURCES}/namespaces/${namespace}/virtualmachineinstances/${name}/evacuate/cancel`,
        body: { evacuationNodeName: node },
        signal,
      });
    },
    async createMigration(namespace, vmi, node, signal): Promise<CreateAnswer> {
      const path = `${KV}/namespaces/${namespace}/virtualmachineinstancemigrations`;
      const res = await k.send({
        method: 'POST',
        path,
        body: {
          apiVersion: 'kubevirt.io/v1',
          kind: 'VirtualMachineInstanceMigration',
          metadata: { generateName: 'drainer-evacuation-', namespace, labels: { 'drainer.dev/node': node } },
          spec: { vmiName: vmi },
        },
        signal,
      });
      const body = res.body as { metadata?: { name?: string }; message?: unknown } | undefined;
      if (res.code >= 200 && res.code < 300) return { kind: 'created', name: body?.metadata?.name ?? '' };
      // KubeVirt's admission answers 400 (a second open migration, a VMI that cannot migrate)
      if (res.code === 400 || res.code === 422)
        return {
          kind: 'refused',
          message: typeof body?.message === 'string' ? body.message : `HTTP ${res.code}`,
        };
      throw errorForStatus(res.code, res.body ?? {}, 'POST', path);
    },
    listNodes: (signal) => listAll<NodeView>('/api/v1/nodes', {}, signal),
    listActivePods: (signal) =>
      listAll<PodSpecView>(
        '/api/v1/pods',
        { fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed' },
        signal,
      ),
  };
}
