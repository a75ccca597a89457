// Ordinary pods on the node beside the VMs: a Deployment of pause containers (the image every node has),
// to see drainer's own pod drain evict them after the VMs left and the scheduler bring them back.
import { waitFor } from '../../functional/support/wait.ts';
import { isReady } from './cluster.ts';
import type { Kubectl, Obj } from './kubectl.ts';

export const APPS_NS = 'drainer-real-apps';

export class Apps {
  private readonly k: Kubectl;
  readonly name: string;

  constructor(k: Kubectl, name = 'web') {
    this.k = k;
    this.name = name;
  }

  async deploy(replicas: number): Promise<Obj[]> {
    await this.k.run(['create', 'namespace', APPS_NS]);
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: this.name, namespace: APPS_NS },
      spec: {
        replicas,
        selector: { matchLabels: { app: this.name } },
        template: {
          metadata: { labels: { app: this.name } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10', imagePullPolicy: 'Never' }],
          },
        },
      },
    };
    await this.k.ok(['apply', '-f', '-'], { input: JSON.stringify(deployment) });
    return this.waitRunning(replicas);
  }

  async pods(): Promise<Obj[]> {
    return ((await this.k.get(['pods', '-n', APPS_NS, '-l', `app=${this.name}`]))?.items ?? []) as Obj[];
  }

  async waitRunning(n: number): Promise<Obj[]> {
    return waitFor(
      async () => {
        const ready = (await this.pods()).filter((p) => isReady(p) && !p.metadata.deletionTimestamp);
        return ready.length === n ? ready : undefined;
      },
      { what: `${n} ${this.name} pods Running and Ready`, timeoutMs: 120_000 },
    );
  }

  async remove(): Promise<void> {
    await this.k.run(['delete', 'namespace', APPS_NS, '--wait=false']);
  }
}
