// One KubeVirt case file's world: the real control plane installed and found running, drainer installed (with
// Nova off when no OpenStack is up), the emulated node side answering for the kit's node and a second, emulated
// Node; VMIs made and removed per case.
import { afterAll, afterEach, beforeAll } from 'vitest';
import { waitFor } from '../../../functional/support/wait.ts';
import { apiClient } from '../api-client.ts';
import { Cluster } from '../cluster.ts';
import { realEnvWithoutNova, kubevirtEnv, type KubeVirtEnv, type RealEnv } from '../env.ts';
import { install } from '../install.ts';
import { kubectl, type Kubectl, type Obj } from '../kubectl.ts';
import { VirtApiInNetns } from './api-netns.ts';
import { installControlPlane, removeVirtApiRoutes, type ControlPlane } from './control-plane.ts';
import { NodeSide } from './node-side.ts';
import { Vmis } from './vmis.ts';

export const VM_NAMESPACE = 'drainer-real-kubevirt';

export interface KubeVirtWorld {
  env: RealEnv;
  kv: KubeVirtEnv;
  k: Kubectl;
  cluster: Cluster;
  controlPlane: ControlPlane;
  nodeSide: NodeSide;
  vmis: Vmis;
}

/** The node's InternalIP (the emulated node reports the same address: the suite's host). */
const internalIp = (node: Obj): string =>
  ((node.status?.addresses ?? []) as Obj[]).find((a) => a.type === 'InternalIP')?.address ?? '127.0.0.1';

/** Only with DRAINER_REAL_KUBEVIRT=1 (the cases skip otherwise). */
export const kubevirtWanted = (): boolean => kubevirtEnv() !== undefined;

export function useKubeVirt(): () => KubeVirtWorld {
  let world: KubeVirtWorld | undefined;
  let virtApi: VirtApiInNetns | undefined;
  let k: Kubectl | undefined;
  beforeAll(async () => {
    const env = realEnvWithoutNova();
    const kv = kubevirtEnv()!;
    k = kubectl(env);
    const cluster = new Cluster(env, k);
    virtApi = new VirtApiInNetns(kv, k, env.kubeconfig);
    const controlPlane = await installControlPlane(k, kv, env.kubeconfig, virtApi);
    if (!(await cluster.readyAgent())) (await install({ env, k, cluster })).overlay.remove();
    await k.run(['create', 'namespace', VM_NAMESPACE]);
    const nodeSide = new NodeSide({
      realNode: env.node,
      emulatedNode: kv.emulatedNode,
      nodeIp: internalIp(await cluster.node()),
      namespace: VM_NAMESPACE,
      handler: apiClient(env.kubeconfig, { as: `system:serviceaccount:${kv.namespace}:kubevirt-handler` }),
      admin: apiClient(env.kubeconfig),
    });
    await nodeSide.start();
    world = {
      env,
      kv,
      k,
      cluster,
      controlPlane,
      nodeSide,
      vmis: new Vmis(k, VM_NAMESPACE, env.node, kv.emulatedNode),
    };
  });
  afterEach(async () => {
    if (!world) return;
    await world.vmis.removeAll();
    await world.cluster.ensureInService();
    await world.k.run(['delete', 'vmim', '-n', VM_NAMESPACE, '--all', '--wait=false']);
  });
  afterAll(async () => {
    if (world) {
      await world.nodeSide.stop();
      // the emulated node goes with the world: nothing would keep its lease (pods on it are gone with the VMIs)
      await world.k.run(['delete', 'node', world.kv.emulatedNode, '--wait=false']);
    }
    // virt-api and its namespace go last, whatever beforeAll got to, and first what routes requests to it
    if (k && virtApi) await removeVirtApiRoutes(k);
    await virtApi?.stop();
  });
  return () => {
    if (!world) throw new Error('the KubeVirt world is not set up (beforeAll failed?)');
    return world;
  };
}

/** Waits until `probe` holds, naming `what`; the node side's last errors are in the message. */
export function until<T>(
  w: KubeVirtWorld,
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 180_000,
) {
  return waitFor(probe, { what, timeoutMs, intervalMs: 1_000 }, () =>
    w.nodeSide.errors.slice(-3).join(' | '),
  );
}
