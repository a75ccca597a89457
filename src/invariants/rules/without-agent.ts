// A finding about a node with no live agent (taken off by drainer.dev/agent=disabled, or never
// scheduled there) is nobody's broken promise: the agent that would heal it is not there. It is the
// operator's finding under its own id, naming the node and the way to bring the agent back.
import { agentAlive } from '../agents.ts';
import type { InvariantId, Violation } from '../violation.ts';
import type { CheckOptions, World } from '../world.ts';

export function orWithoutAgent(
  world: World,
  opts: CheckOptions,
  node: string,
  v: Violation,
  id: InvariantId,
  otherwise: string,
): Violation {
  if (agentAlive(world, node, opts) !== false) return v;
  return {
    id,
    object: v.object,
    node,
    evidence: `${v.evidence}; node ${node} has no agent running (no live Lease): nobody acts on it`,
    fix: `start the agent on node ${node} (is the DaemonSet scheduled there? \`kubectl label node ${node} drainer.dev/agent-\` if it was taken off), or ${otherwise}`,
  };
}
