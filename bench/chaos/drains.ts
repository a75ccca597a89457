// The drains the soak runs beside drainer, each as the tool that runs it in real clusters, against a
// node with VMs on it: `kubectl drain` (the real /usr/bin/kubectl; without it, the Eviction-API loop
// of src/kube/drain.ts), `kubectl drain --disable-eviction`, Karpenter's terminator, a Cluster API
// Machine deletion with nodeDrainTimeout, and kured's drain followed by a reboot. Each runs its
// whole cycle: take the node out, drain, then what the tool does next (uncordon, reboot, replace the
// machine), so the node comes back and the fleet keeps cycling. The promise under test is read at
// the moment a drain returns: no Nova server and no VMI of the node is still on it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { drainSchema } from '../../src/config/schema.ts';
import { isApiError } from '../../src/errors.ts';
import { createKubeClients, type KubeClients } from '../../src/kube/client.ts';
import { drainNode } from '../../src/kube/drain.ts';
import type { KubePod } from '../../src/kube/types.ts';
import { REBOOT_KEY } from '../../src/names.ts';
import { MAINTENANCE_KEY } from '../../src/plugins/nova/policy.ts';
import type { ServerView } from '../../src/sandbox/openstack/index.ts';
import { agentBack, agentTakenOffEmpty, drainStarted } from './agent-off.ts';
import type { Fleet } from './fleet.ts';
import type { Maintenances } from './maintenances.ts';
import type { Operator } from './operator.ts';
import { capiDrain, karpenterTerminate, type TakerPort } from './takers.ts';
import type { Machines } from './machines.ts';

const KUBECTL = '/usr/bin/kubectl';
/** Real seconds a drain may take before it gives up (kubectl's --timeout, Karpenter's and kured's bound). */
const DRAIN_TIMEOUT_S = 60;
/** The Cluster API Machine's nodeDrainTimeout (real seconds): past it, the Machine is deleted anyway. */
export const NODE_DRAIN_TIMEOUT_S = 30;
/** Real ms between a drain's return and the node's way back (the maintenance itself). */
const MAINTENANCE_MS = 800;
/** How long a kured reboot keeps the node's agent down (real ms). */
const REBOOT_MS = 1500;

export const DRAIN_KINDS = ['kubectl', 'disable-eviction', 'karpenter', 'capi', 'kured'] as const;
export type DrainKind = (typeof DRAIN_KINDS)[number];

export const DRAIN_KIND_TEXT: Readonly<Record<DrainKind, string>> = {
  kubectl: 'kubectl drain',
  'disable-eviction': 'kubectl drain --disable-eviction',
  karpenter: "Karpenter's terminator",
  capi: `Cluster API Machine deletion (nodeDrainTimeout ${NODE_DRAIN_TIMEOUT_S} s)`,
  kured: 'kured drain, then reboot',
};

export interface OnHost {
  /** VMs that must not be on the host when a drain returns: servers (but the ones below) and VMIs. */
  readonly occupying: string[];
  /**
   * VMs on the host that run no guest and may stay: servers stopped on a node whose maintenance is a
   * declared reboot, VMIs that ended (Succeeded, Failed) or are being deleted.
   */
  readonly stopped: string[];
  /**
   * Of `occupying`, by server name: servers on a declared reboot whose guest is off (vm_state
   * stopped) while a resize runs on them. Stopped, they may stay; the resize is whoever asked for it
   * (check.ts excuses their owner's; a cold migration of drainer's must end before its gate opens).
   */
  readonly offInResize?: Readonly<Record<string, string>>;
}

export interface DrainReturn {
  readonly node: string;
  readonly kind: DrainKind;
  readonly round: number;
  /** The drain returned success: the tool goes on to take the node down. */
  readonly ok: boolean;
  /** What was on the node at the moment the drain returned (whatever its result). */
  readonly onHost: OnHost;
  /** VMs on the node when the drain started. */
  readonly startedWith: number;
  /**
   * The node was being given back while the drain ran (a restore began or a maintenance of it ended:
   * an uncordon, a forced restore, the Node registered again): its return then promises nothing.
   */
  readonly contradicted: boolean;
  /** An operator released the node's gate in this maintenance (drainer release): drains go on by their word. */
  readonly released: boolean;
  /**
   * When it returned, the operator had taken the node's agent off with nothing on the node
   * (agentTakenOffEmpty): no gate there, by the operator's choice.
   */
  readonly agentOff?: boolean;
  /**
   * When the agent of the node last came back after the operator had taken it off with nothing on the
   * node (sandbox clock; fleet.backFromOff): a return before its gate held is the operator's too (check.ts).
   */
  readonly agentBackAt?: number;
  readonly ms: number;
  /** When the drain started and returned, on the sandbox's clock (the one owners' actions are timed on). */
  readonly startedAt: number;
  readonly returnedAt: number;
  /** Cluster API: a pre-drain hook was on the node's Machine when it was deleted (the drain waits on it). */
  readonly hooked?: boolean;
  /** The soak ended it (its drains are stopped at the end). */
  readonly stopped?: boolean;
}

const FINAL_VMI = new Set(['Succeeded', 'Failed']);

const declaresReboot = (fleet: Fleet, node: string): boolean => {
  const n = fleet.sandbox.kube.store.find('nodes', undefined, node);
  return (n?.metadata.labels?.[REBOOT_KEY] ?? n?.metadata.annotations?.[REBOOT_KEY]) === 'true';
};

/**
 * drainer would refuse the node's evacuation before any change (`drainer plan` says so, exit 3): a
 * server whose way out is `stop` is on it and its maintenance is no declared reboot. A drain of it can
 * only give up.
 */
export function refusedByPlan(fleet: Fleet, node: string): boolean {
  if (declaresReboot(fleet, node)) return false;
  return fleet.sandbox.openstack.state
    .serversOnHost(node)
    .some((s) => s.metadata?.[MAINTENANCE_KEY] === 'stop');
}

/** What of the node's VMs is on it now: Nova servers by host, VMIs by their node label. */
export function onHost(fleet: Fleet, node: string): OnHost {
  const servers = serversAtReturn(
    fleet.sandbox.openstack.state.serversOnHost(node),
    declaresReboot(fleet, node),
  );
  const { occupying, stopped } = servers;
  for (const v of fleet.sandbox.kube.store.list('virtualmachineinstances.kubevirt.io')) {
    if (v.metadata.labels?.['kubevirt.io/nodeName'] !== node) continue;
    // a VMI whose eviction strategy is None stops with its launcher pod: the drain ends it
    if ((v.spec as { evictionStrategy?: string } | undefined)?.evictionStrategy === 'None') continue;
    const name = `VMI ${v.metadata.namespace ?? ''}/${v.metadata.name}`;
    // one that ended (its launcher pod deleted, as a drain that bypasses evictions does) runs nowhere
    const phase = (v.status as { phase?: string } | undefined)?.phase ?? '';
    if (FINAL_VMI.has(phase) || v.metadata.deletionTimestamp) stopped.push(`${name} (${phase || 'deleted'})`);
    else occupying.push(name);
  }
  return { ...servers, occupying, stopped };
}

/** The node's Nova servers at a drain's return: on a declared reboot a stopped guest may stay. */
export function serversAtReturn(
  servers: readonly Pick<ServerView, 'name' | 'status' | 'vmState'>[],
  reboot: boolean,
): OnHost {
  const occupying: string[] = [];
  const stopped: string[] = [];
  const offInResize: Record<string, string> = {};
  for (const s of servers) {
    if (reboot && s.status === 'SHUTOFF') {
      stopped.push(`server ${s.name}`);
      continue;
    }
    const entry = `server ${s.name}${s.status === 'ACTIVE' ? '' : ` (${s.status})`}`;
    occupying.push(entry);
    // Nova's status of a stopped server in a resize is RESIZE; its vm_state stays stopped
    if (reboot && s.vmState === 'stopped') offInResize[s.name] = entry;
  }
  return { occupying, stopped, ...(Object.keys(offInResize).length ? { offInResize } : {}) };
}

/** Every VM on the node, as one list (the checks' end state). */
export const vmsOn = (fleet: Fleet, node: string): string[] => {
  const h = onHost(fleet, node);
  return [...h.occupying, ...h.stopped];
};

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((r) => {
    const t = setTimeout(r, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
  });

export class Drains {
  readonly #fleet: Fleet;
  readonly #operator: Operator;
  readonly #maintenances: Maintenances;
  readonly #running = new Map<string, Promise<void>>();
  readonly #stop = new AbortController();
  readonly returns: DrainReturn[] = [];
  readonly started: Record<DrainKind, number> = Object.fromEntries(DRAIN_KINDS.map((k) => [k, 0])) as Record<
    DrainKind,
    number
  >;
  readonly tool = existsSync(KUBECTL) ? 'kubectl drain' : 'Eviction API';

  readonly #machines: Machines | undefined;

  constructor(fleet: Fleet, operator: Operator, maintenances: Maintenances, machines?: Machines) {
    this.#fleet = fleet;
    this.#operator = operator;
    this.#maintenances = maintenances;
    this.#machines = machines;
  }

  /** Is a drain cycle (drain and the way back) of the node under way? */
  busy(node: string): boolean {
    return this.#running.has(node);
  }

  /** Starts a drain cycle of this kind on the node unless one runs already; false then. */
  start(node: string, kind: DrainKind, round: number): boolean {
    if (this.#running.has(node)) return false;
    this.started[kind]++;
    const run = this.#cycle(node, kind, round)
      .catch(() => undefined)
      .finally(() => this.#running.delete(node));
    this.#running.set(node, run);
    return true;
  }

  get running(): number {
    return this.#running.size;
  }

  /** Waits for the running cycles, at most ms; then stops them. */
  async settle(ms: number): Promise<void> {
    const all = Promise.allSettled([...this.#running.values()]);
    const t = setTimeout(() => this.#stop.abort(), ms);
    await all;
    clearTimeout(t);
  }

  async #cycle(node: string, kind: DrainKind, round: number): Promise<void> {
    const startedWith = onHost(this.#fleet, node).occupying.length;
    const t0 = Date.now();
    const startedAt = this.#fleet.sandbox.clock.now();
    const back = this.#maintenances.givenBack(node);
    const hooked = kind === 'capi' && (await this.#machines?.hooked(node)) === true;
    const ok = await this.#drain(node, kind);
    // read at once: the moment the tool would go on
    this.returns.push({
      node,
      kind,
      round,
      ok,
      onHost: onHost(this.#fleet, node),
      startedWith,
      contradicted: this.#maintenances.givenBack(node) > back,
      released: this.#maintenances.releasedNow(node),
      // read before the way back: a Node registered again brings its agent back (agentBack)
      ...(agentTakenOffEmpty(this.#fleet, node) ? { agentOff: true } : {}),
      ...(this.#fleet.backFromOff.has(node) ? { agentBackAt: this.#fleet.backFromOff.get(node) } : {}),
      ms: Date.now() - t0,
      startedAt,
      returnedAt: this.#fleet.sandbox.clock.now(),
      ...(hooked ? { hooked } : {}),
      ...(this.#stop.signal.aborted ? { stopped: true } : {}),
    });
    if (this.#stop.signal.aborted) return;
    await sleep(MAINTENANCE_MS, this.#stop.signal);
    await this.#wayBack(node, kind, ok);
  }

  /** After the drain: what the tool does next, ending with the node in service again. */
  async #wayBack(node: string, kind: DrainKind, ok: boolean): Promise<void> {
    const op = this.#operator;
    switch (kind) {
      case 'karpenter':
        // the instance is terminated and a new one registers under the name
        await op.recreateNode(node);
        await agentBack(this.#fleet, node);
        return;
      case 'capi':
        // the Machine's instance is terminated (even past nodeDrainTimeout), the Machine goes, and a
        // new Machine's node registers under the name
        await this.#machines?.finish(node).catch(() => undefined);
        await op.recreateNode(node);
        await agentBack(this.#fleet, node);
        await this.#machines?.make(node).catch(() => undefined);
        return;
      case 'kured':
        if (ok) {
          // the reboot takes the node's agent down with everything else on it
          const agents = this.#fleet.agents.get(node) ?? [];
          await Promise.all(agents.map((a) => a.kill()));
          await sleep(REBOOT_MS);
          if (!this.#fleet.agents.get(node)?.length) await this.#fleet.startAgent(node, agents[0]?.instance);
        }
        await op.cordon(node, false);
        return;
      default:
        await op.cordon(node, false);
    }
  }

  async #kubeconfig(): Promise<{ yaml: string; close: () => Promise<void> }> {
    const proxy = await this.#fleet.toolsProxy();
    const yaml = this.#fleet.sandbox.kube.kubeconfig().split(this.#fleet.sandbox.kube.url).join(proxy.url);
    return { yaml, close: () => proxy.close() };
  }

  async #drain(node: string, kind: DrainKind): Promise<boolean> {
    drainStarted(this.#fleet, node, kind);
    const kc = await this.#kubeconfig();
    try {
      const k = createKubeClients({ kubeconfigYaml: kc.yaml });
      switch (kind) {
        case 'karpenter': {
          await this.#operator.taint(node, true); // karpenter.sh/disrupted:NoSchedule
          const r = await karpenterTerminate(this.#port(k), node, {
            retryMs: 200,
            deadline: Date.now() + DRAIN_TIMEOUT_S * 1000,
          });
          return r.done;
        }
        case 'capi': {
          const machines = this.#machines;
          const cordon = () => this.#operator.cordon(node, true);
          // without Machines: the drain as before; with them, the Machine deleted, its hooks waited on
          if (!machines) await cordon();
          else await machines.delete(node);
          const r = await capiDrain(this.#port(k), node, {
            retryMs: 200,
            nodeDrainTimeoutMs: NODE_DRAIN_TIMEOUT_S * 1000,
            ...(machines ? { annotations: () => machines.annotations(node), beforeDrain: cordon } : {}),
          });
          return r.done;
        }
        default: {
          const args = kind === 'disable-eviction' ? ['--disable-eviction'] : [];
          if (this.tool === 'kubectl drain') return await this.#kubectl(node, kc.yaml, args);
          return await this.#evictionApi(k, node);
        }
      }
    } catch {
      return false;
    } finally {
      await kc.close();
    }
  }

  #port(k: KubeClients): TakerPort {
    return {
      pods: async (node) =>
        (
          await k.request<{ items: KubePod[] }>({
            path: '/api/v1/pods',
            query: { fieldSelector: `spec.nodeName=${node}` },
          })
        ).items,
      evict: async (p) => {
        const { namespace = '', name = '' } = p.metadata;
        try {
          await k.request({
            method: 'POST',
            path: `/api/v1/namespaces/${namespace}/pods/${name}/eviction`,
            body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
          });
          return 201;
        } catch (err) {
          return isApiError(err) && err.status !== undefined ? err.status : 0;
        }
      },
      // the scenario's clock; a deletionTimestamp is real time, put back on it (exactly: the store kept it)
      now: () => this.#fleet.sandbox.clock.now(),
      deletedAt: (p) => this.#fleet.sandbox.kube.store.stamps.metaMoment(p, 'deletionTimestamp'),
      sleep: (ms) => sleep(ms, this.#stop.signal),
      signal: this.#stop.signal,
    };
  }

  async #evictionApi(k: KubeClients, node: string): Promise<boolean> {
    await this.#operator.cordon(node, true);
    const config = drainSchema.parse({ timeout: DRAIN_TIMEOUT_S, evictionRetryInterval: 5 });
    const r = await drainNode(k, { node, config, signal: this.#stop.signal, log: this.#fleet.log });
    return r.succeeded;
  }

  #kubectl(node: string, kubeconfigYaml: string, extra: string[]): Promise<boolean> {
    const dir = mkdtempSync(path.join(tmpdir(), 'drainer-chaos-'));
    const file = path.join(dir, 'kubeconfig');
    writeFileSync(file, kubeconfigYaml, { mode: 0o600 });
    const args = ['--kubeconfig', file, 'drain', node, '--ignore-daemonsets', '--delete-emptydir-data'];
    return new Promise((resolve) => {
      const child = spawn(KUBECTL, [...args, ...extra, '--force', `--timeout=${DRAIN_TIMEOUT_S}s`], {
        stdio: 'ignore',
        signal: this.#stop.signal,
      });
      child.once('error', () => resolve(false));
      child.once('close', (code) => resolve(code === 0));
    });
  }
}
