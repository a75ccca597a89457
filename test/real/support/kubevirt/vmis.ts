// The cases' VirtualMachineInstances on the real KubeVirt: small guests with no disk and no network (nothing the
// emulated node side would have to provide), started on the kit's node, read back as KubeVirt shows them.
import { waitFor } from '../../../functional/support/wait.ts';
import type { Kubectl, Obj } from '../kubectl.ts';
import { EMU } from './node-side.ts';

export type EvictionStrategy = 'LiveMigrate' | 'LiveMigrateIfPossible' | 'External' | 'None';

export interface VmiOptions {
  strategy: EvictionStrategy;
  /** false: the node side reports LiveMigratable False (reason DisksNotLiveMigratable). */
  migratable?: boolean;
  /** The node side fails each migration of this VMI with this reason. */
  failWith?: string;
  migrationSeconds?: number;
}

export function vmiManifest(name: string, namespace: string, o: VmiOptions): Obj {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: {
      name,
      namespace,
      annotations: {
        ...(o.migratable === false ? { [EMU.migratable]: 'false' } : {}),
        ...(o.failWith ? { [EMU.migration]: 'fail', [EMU.failureReason]: o.failWith } : {}),
        ...(o.migrationSeconds ? { [EMU.migrationSeconds]: String(o.migrationSeconds) } : {}),
      },
    },
    spec: {
      evictionStrategy: o.strategy,
      terminationGracePeriodSeconds: 0,
      domain: {
        memory: { guest: '64Mi' },
        resources: { requests: { memory: '64Mi', cpu: '10m' } },
        devices: { autoattachPodInterface: false, autoattachGraphicsDevice: false },
      },
    },
  };
}

export class Vmis {
  private readonly k: Kubectl;
  readonly namespace: string;
  private readonly realNode: string;
  private readonly emulatedNode: string;

  constructor(k: Kubectl, namespace: string, realNode: string, emulatedNode: string) {
    this.k = k;
    this.namespace = namespace;
    this.realNode = realNode;
    this.emulatedNode = emulatedNode;
  }

  get = (name: string): Promise<Obj> => this.k.get(['vmi', '-n', this.namespace, name]);

  async list(): Promise<Obj[]> {
    return ((await this.k.get(['vmi', '-n', this.namespace]))?.items ?? []) as Obj[];
  }

  async migrations(): Promise<Obj[]> {
    return ((await this.k.get(['vmim', '-n', this.namespace]))?.items ?? []) as Obj[];
  }

  /** Launcher pods (KubeVirt's label kubevirt.io=virt-launcher) of the namespace. */
  async launchers(): Promise<Obj[]> {
    return ((await this.k.get(['pods', '-n', this.namespace, '-l', 'kubevirt.io=virt-launcher']))?.items ??
      []) as Obj[];
  }

  /**
   * Creates the VMIs and waits until each is Running on the kit's node (the emulated node is cordoned meanwhile,
   * so the scheduler puts the launcher pods on the real one).
   */
  async start(specs: Record<string, VmiOptions>): Promise<Obj[]> {
    await this.k.ok(['cordon', this.emulatedNode]);
    try {
      const items = Object.entries(specs).map(([name, o]) => vmiManifest(name, this.namespace, o));
      await this.k.ok(['create', '-f', '-'], {
        input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
      });
      let last: Obj[] = [];
      await waitFor(
        async () => {
          last = await this.list();
          return last.length === items.length &&
            last.every((v) => v.status?.phase === 'Running' && v.status?.nodeName === this.realNode)
            ? true
            : undefined;
        },
        { what: `VMIs ${Object.keys(specs).join(', ')} Running on ${this.realNode}`, timeoutMs: 180_000 },
        () => last.map((v) => `${v.metadata.name}: ${v.status?.phase} on ${v.status?.nodeName}`).join(', '),
      );
      return last;
    } finally {
      await this.k.ok(['uncordon', this.emulatedNode]);
    }
  }

  /** Deletes every VMI of the namespace and waits until they (and their launcher pods) are gone. */
  async removeAll(): Promise<void> {
    await this.k.run(['delete', 'vmi', '-n', this.namespace, '--all', '--wait=false']);
    await waitFor(
      async () =>
        (await this.list()).length === 0 && (await this.launchers()).length === 0 ? true : undefined,
      { what: `the VMIs and launcher pods of ${this.namespace} to be gone`, timeoutMs: 180_000 },
    );
  }
}
