// virt-api's subresources.kubevirt.io/v1, what drainer uses of it: VirtualMachine stop/start
// (vm-actions.ts), and from v1.7 (v1.7.0 release notes, PR #16097)
// PUT …/virtualmachineinstances/{name}/evacuate/cancel with {evacuationNodeName} takes an eviction
// mark back (KubeVirt's pkg/virt-api/rest, EvacuateCancelHandler and validateEvacuationNode).
// Before v1.7 the group serves no such resource, which is how a client tells.
import type { ApiAnswer, ApiExtension } from '../../kube/extensions.ts';
import { failure } from '../../kube/status.ts';
import { RES, mutateStatus, tryGet, type StoreLike } from '../store.ts';
import { taintsOf } from '../util.ts';
import { readSettings } from './config.ts';
import { vmAction } from './vm-actions.ts';
import { vmiStatus } from './vmi.ts';

/** The first minor version that serves evacuate/cancel. */
export const CANCEL_FROM_MINOR = 7;

const answer = (code: number, reason: string, message: string): ApiAnswer => ({
  code,
  body: failure(code, reason, message),
});

function cancel(store: StoreLike, ns: string, name: string, body: unknown): ApiAnswer {
  const vmi = tryGet(store, RES.vmis, ns, name);
  if (!vmi) return answer(404, 'NotFound', `virtualmachineinstance.kubevirt.io "${name}" not found`);
  const settings = readSettings(store);
  const marked = vmiStatus(vmi).evacuationNodeName;
  const nodeName = marked || vmiStatus(vmi).nodeName || '';
  const node = tryGet(store, RES.nodes, undefined, nodeName);
  if (node && taintsOf(node).some((t) => t.key === settings.drainTaintKey && t.effect === 'NoSchedule'))
    return answer(
      400,
      'BadRequest',
      `Node "${nodeName}" has NodeDrainTaintKey "${settings.drainTaintKey}:NoSchedule"`,
    );
  if (!marked) return { code: 200, body: {} };
  if (!body) return answer(400, 'BadRequest', 'No body');
  const want = (body as { evacuationNodeName?: unknown }).evacuationNodeName;
  if (want !== marked)
    return answer(
      500,
      'InternalError',
      'Internal error occurred: the server rejected our request due to an error in our request',
    );
  mutateStatus(store, RES.vmis, vmi, (v) => {
    const s = { ...vmiStatus(v) };
    delete s.evacuationNodeName;
    v.status = s;
  });
  return { code: 200, body: {} };
}

export function kubevirtSubresources(store: StoreLike): ApiExtension {
  const serves = () => readSettings(store).minor >= CANCEL_FROM_MINOR;
  return {
    group: 'subresources.kubevirt.io',
    version: 'v1',
    resources: () => [
      ...['start', 'stop'].map((sub) => ({
        name: `virtualmachines/${sub}`,
        singularName: '',
        namespaced: true,
        kind: '',
        verbs: ['update'],
      })),
      ...(serves()
        ? [
            {
              name: 'virtualmachineinstances/evacuate/cancel',
              singularName: '',
              namespaced: true,
              kind: 'EvacuateCancelOptions',
              verbs: ['update'],
            },
          ]
        : []),
    ],
    handle(method, segments, body) {
      const [nsWord, ns, plural, name, sub, verb, ...extra] = segments;
      if (nsWord === 'namespaces' && ns && name && plural === 'virtualmachines' && !verb)
        return sub === 'stop' || sub === 'start'
          ? method === 'PUT'
            ? vmAction(store, ns, name, sub)
            : answer(
                405,
                'MethodNotAllowed',
                'the server does not allow this method on the requested resource',
              )
          : undefined;
      const isCancel =
        nsWord === 'namespaces' &&
        plural === 'virtualmachineinstances' &&
        sub === 'evacuate' &&
        verb === 'cancel' &&
        extra.length === 0;
      if (!isCancel || !ns || !name || !serves()) return undefined;
      if (method !== 'PUT')
        return answer(
          405,
          'MethodNotAllowed',
          'the server does not allow this method on the requested resource',
        );
      return cancel(store, ns, name, body);
    },
  };
}
