// How drainer asks KubeVirt to evacuate: the drain taint (KubeVirt migrates every VMI on the node
// whose strategy allows it) or an Eviction of each launcher pod (KubeVirt's webhook marks the VMI
// for evacuation and answers 429 "Eviction triggered evacuation").
import type { Logger } from '../../observability/logger.ts';
import { vmiKey } from './classify.ts';
import { activeLauncher } from './pods.ts';
import type { KubevirtApi } from './port.ts';
import type { RecordKeeper } from './keeper.ts';
import type { Vmi } from './types.ts';

export const DRAIN_TAINT_VALUE = 'draining';
export const DRAIN_TAINT_EFFECT = 'NoSchedule';

export type { RecordKeeper } from './keeper.ts';

export interface TriggerDeps {
  readonly api: KubevirtApi;
  readonly node: string;
  readonly log: Logger;
  readonly drainTaintKey: string;
  readonly record: RecordKeeper;
}

export class Triggers {
  readonly #deps: TriggerDeps;
  /** VMIs (by uid: one created again under its name is asked anew) whose eviction KubeVirt accepted. */
  readonly #asked = new Set<string>();

  constructor(deps: TriggerDeps) {
    this.#deps = deps;
  }

  /** Adds `<nodeDrainTaintKey>=draining:NoSchedule` unless a taint with that key and effect is there. */
  async taint(signal: AbortSignal): Promise<void> {
    const { api, node, log, drainTaintKey: key, record } = this.#deps;
    const present = (await api.nodeTaints(node, signal)).some(
      (t) => t.key === key && t.effect === DRAIN_TAINT_EFFECT,
    );
    if (present) return; // ours from an earlier run (recorded then), or someone else's: never claim it
    await record.save({ ...record.current, taint: { key, effect: DRAIN_TAINT_EFFECT } });
    await api.addTaint(node, { key, value: DRAIN_TAINT_VALUE, effect: DRAIN_TAINT_EFFECT }, signal);
    log.info({ taint: key }, 'drain taint added: KubeVirt evacuates the VMIs');
  }

  /** Removes the drain taint only when the record says we added it. */
  async removeOurTaint(signal: AbortSignal): Promise<void> {
    const { api, node, log, record } = this.#deps;
    const taint = record.current.taint;
    if (!taint) return;
    await api.removeTaint(node, taint.key, taint.effect, signal);
    const { taint: _removed, ...rest } = record.current;
    await record.save(rest);
    log.info({ taint: taint.key }, 'drain taint removed');
  }

  /** Evicts the launcher pod of each VMI not asked yet; a refusal is asked again on the next call. */
  async evict(vmis: readonly (Vmi | undefined)[], signal: AbortSignal): Promise<void> {
    const { api, node, log } = this.#deps;
    const todo = vmis.filter((v): v is Vmi => !!v && !this.#asked.has(askedKey(v)));
    if (todo.length === 0) return;
    const pods = await api.listVmPods(node, signal);
    for (const vmi of todo) {
      const key = vmiKey(vmi);
      const pod = activeLauncher(pods, vmi.metadata.uid);
      if (!pod) continue;
      const answer = await api.evictPod(pod.metadata.namespace ?? 'default', pod.metadata.name, signal);
      switch (answer.kind) {
        case 'triggered':
          log.info({ vmi: key, pod: pod.metadata.name }, 'launcher eviction triggered the evacuation');
          break;
        case 'evicted':
          log.warn({ vmi: key, pod: pod.metadata.name }, 'launcher pod evicted without a migration');
          break;
        case 'gone':
          break;
        case 'refused':
          log.warn({ vmi: key, reason: answer.message }, 'launcher pod eviction refused; asking again');
          continue;
      }
      this.#asked.add(askedKey(vmi));
    }
  }
}

const askedKey = (v: Vmi): string => v.metadata.uid ?? vmiKey(v);
