// `kubectl drain` running beside drainer, as kured or Cluster API would run it (the real
// /usr/bin/kubectl; without it, the same Eviction-API loop src/demo/drain-act.ts falls back to).
// The promise under test is read at the moment a drain returns: no Nova server and no VMI of the
// node is still on it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { drainSchema } from '../../src/config/schema.ts';
import { createKubeClients } from '../../src/kube/client.ts';
import { drainNode } from '../../src/kube/drain.ts';
import type { Fleet } from './fleet.ts';

const KUBECTL = '/usr/bin/kubectl';
/** Real seconds a drain may take before it gives up (as `--timeout`). */
const DRAIN_TIMEOUT_S = 60;

export interface DrainReturn {
  readonly node: string;
  readonly ok: boolean;
  /** What was still on the node when the drain returned successfully. */
  readonly left: string[];
  /**
   * Someone put the node back in service while the drain ran (an uncordon, the Node registered
   * again): its return then promises nothing about the host.
   */
  readonly contradicted: boolean;
}

/** What of the node's VMs is on it now: Nova servers by host, VMIs by their node label. */
export function vmsOn(fleet: Fleet, node: string): string[] {
  const servers = fleet.sandbox.openstack.state.serversOnHost(node).map((s) => `server ${s.name}`);
  const vmis = fleet.sandbox.kube.store
    .list('virtualmachineinstances.kubevirt.io')
    .filter((v) => v.metadata.labels?.['kubevirt.io/nodeName'] === node)
    .map((v) => `VMI ${v.metadata.namespace ?? ''}/${v.metadata.name}`);
  return [...servers, ...vmis];
}

export class Drains {
  readonly #fleet: Fleet;
  readonly #running = new Map<string, Promise<void>>();
  readonly #contradicted = new Set<string>();
  readonly #stop = new AbortController();
  readonly returns: DrainReturn[] = [];
  readonly tool = existsSync(KUBECTL) ? 'kubectl drain' : 'Eviction API';

  constructor(fleet: Fleet) {
    this.#fleet = fleet;
  }

  /** Starts a drain of the node unless one runs already; false then. */
  start(node: string): boolean {
    if (this.#running.has(node)) return false;
    this.#contradicted.delete(node);
    const run = this.#drain(node)
      .then((ok) => {
        const left = ok ? vmsOn(this.#fleet, node) : [];
        this.returns.push({ node, ok, left, contradicted: this.#contradicted.has(node) });
      })
      .finally(() => this.#running.delete(node));
    this.#running.set(node, run);
    return true;
  }

  /** The node was put back in service: a drain of it running now is overruled. */
  contradict(node: string): void {
    if (this.#running.has(node)) this.#contradicted.add(node);
  }

  get running(): number {
    return this.#running.size;
  }

  /** Waits for the running drains, at most ms; then stops them. */
  async settle(ms: number): Promise<void> {
    const all = Promise.allSettled([...this.#running.values()]);
    const t = setTimeout(() => this.#stop.abort(), ms);
    await all;
    clearTimeout(t);
  }

  async #drain(node: string): Promise<boolean> {
    const proxy = await this.#fleet.toolsProxy();
    const kubeconfig = this.#fleet.sandbox.kube
      .kubeconfig()
      .split(this.#fleet.sandbox.kube.url)
      .join(proxy.url);
    try {
      if (this.tool === 'kubectl drain') return await this.#kubectl(node, kubeconfig);
      const k = createKubeClients({ kubeconfigYaml: kubeconfig });
      await k.request({
        method: 'PATCH',
        path: `/api/v1/nodes/${node}`,
        contentType: 'application/merge-patch+json',
        body: { spec: { unschedulable: true } },
      });
      const config = drainSchema.parse({ timeout: DRAIN_TIMEOUT_S, evictionRetryInterval: 5 });
      const r = await drainNode(k, { node, config, signal: this.#stop.signal, log: this.#fleet.log });
      return r.succeeded;
    } catch {
      return false;
    } finally {
      await proxy.close();
    }
  }

  #kubectl(node: string, kubeconfigYaml: string): Promise<boolean> {
    const dir = mkdtempSync(path.join(tmpdir(), 'drainer-chaos-'));
    const file = path.join(dir, 'kubeconfig');
    writeFileSync(file, kubeconfigYaml, { mode: 0o600 });
    const args = ['--kubeconfig', file, 'drain', node, '--ignore-daemonsets', '--delete-emptydir-data'];
    return new Promise((resolve) => {
      const child = spawn(KUBECTL, [...args, '--force', `--timeout=${DRAIN_TIMEOUT_S}s`], {
        stdio: 'ignore',
        signal: this.#stop.signal,
      });
      child.once('error', () => resolve(false));
      child.once('close', (code) => resolve(code === 0));
    });
  }
}
