// A gate pod being deleted that keeps drainer's finalizer while no agent of its node runs to drop
// it: nothing will ever let it go (the finalizer needs its agent). The usual cause is an uninstall
// while the agents were not running (`kubectl delete -k daemonset/` after the image crash-looped):
// the pod, and with it drainer's namespace, stay Terminating, and a drain of the node waits for good.
import { agentAlive } from '../agents.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World } from '../world.ts';

export function stuckGates(world: World, opts: CheckOptions): Violation[] {
  return world.gatePods
    .filter((p) => p.deleting && p.guarded && agentAlive(world, p.nodeName, opts) === false)
    .map((p) =>
      violation(
        'gate-stuck',
        `pod/${opts.namespace}/${p.name}`,
        `gate pod ${p.name} is being deleted but keeps its finalizer drainer.dev/gate, and no agent of node ${p.nodeName} runs to drop it: it (and drainer's namespace) stays Terminating, and a drain of ${p.nodeName} waits for good`,
        `once node ${p.nodeName} has no VM left (or its agent runs again): \`kubectl -n ${opts.namespace} patch pod ${p.name} --type=merge -p '{"metadata":{"finalizers":null}}'\``,
      ),
    );
}
