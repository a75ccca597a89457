// drainer's promises as checkable invariants (issue 28): the World they are checked over, the
// checks, and the readers that build a World from the live APIs.
export { checkInvariants, RULES } from './check.ts';
export { EXPECTED_4XX } from './rules/requests.ts';
export { INVARIANT_IDS, type InvariantId, type Violation } from './violation.ts';
export type * from './world.ts';
export { readKubeWorld, type KubeWorld } from './read-kube.ts';
export { readNovaWorld, type NovaReader } from './read-nova.ts';
export { checkOptionsOf } from './options.ts';
