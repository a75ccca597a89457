// Takes an operator's annotation off the Node once nothing honours it any more (a leftover release,
// a moot start-now), guarded by the version of the Node the pass read: one written since is the
// operator's new word, and stays. A conflict leaves it to the next pass.
import type { NodeRun } from './run-context.ts';

export async function dropNodeAnnotation(run: NodeRun, key: string, why: string): Promise<void> {
  const version = run.node.metadata?.resourceVersion;
  const guard = version ? { resourceVersion: version } : undefined;
  try {
    await run.deps.cluster.setNodeAnnotation(run.nodeName, key, null, undefined, undefined, guard);
    run.log.info({ node: run.nodeName }, `${key} taken off: ${why}`);
  } catch (err) {
    run.log.debug({ err }, `${key} not taken off yet; next pass`);
  }
}
