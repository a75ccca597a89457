// drainer's promises as checkable invariants (issue 28): the World they are checked over, the
// checks, and the readers that build a World from the live APIs. In short:
//   const world = await readSandboxWorld(sandbox, k, { namespace, observations: { logLines, metrics } });
//   const broken = checkInvariants(world, checkOptionsOf(config, nodes)).filter((v) => !OPERATOR_FINDINGS.has(v.id));
// (readSandboxWorld is in src/sandbox/world.ts; drainer doctor builds its World with readKubeWorld +
// readNovaWorld.) State-based checks can be briefly false between two writes of one pass (a record,
// then the NodeMaintenance status; a gate pod Pending for the kubelet's start delay): check again
// after a few seconds before calling it broken, as test/e2e/stack.ts does.
export { checkInvariants, RULES } from './check.ts';
export { EXPECTED_4XX } from './rules/requests.ts';
export { INVARIANT_IDS, OPERATOR_FINDINGS, type InvariantId, type Violation } from './violation.ts';
export type * from './world.ts';
export { readKubeWorld, type KubeWorld } from './read-kube.ts';
export { readNovaWorld, type NovaReader } from './read-nova.ts';
export { checkOptionsOf } from './options.ts';
