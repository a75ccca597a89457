// Installing and removing drainer the operator's way: `kubectl apply -k` / `kubectl delete -k` of the test
// overlay (support/overlay.ts), and waiting for what the API server shows.
import { waitFor } from '../../functional/support/wait.ts';

import { apiServer, REPO, type Real } from './context.ts';
import { readOpenrc } from './env.ts';
import { NAMESPACE, NODE_LABEL, writeOverlay, type Overlay, type OverlayOptions } from './overlay.ts';

/** Applies the overlay; resolves with the time from apply to the agent pod Ready, in ms. */
export async function install(
  r: Pick<Real, 'env' | 'k' | 'cluster'>,
): Promise<{ overlay: Overlay; readyMs: number }> {
  const overlay = writeOverlay(REPO, r.env, readOpenrc(r.env.openrc), apiServer(r.env.kubeconfig));
  await r.k.ok(['label', 'node', r.env.node, `${NODE_LABEL.key}=${NODE_LABEL.value}`, '--overwrite']);
  const t0 = Date.now();
  await r.k.ok(['apply', '-k', overlay.dir]);
  await waitFor(async () => ((await r.cluster.readyAgent()) ? true : undefined), {
    what: `a Ready drainer agent on ${r.env.node}`,
    timeoutMs: 180_000,
    intervalMs: 250,
  });
  return { overlay, readyMs: Date.now() - t0 };
}

/**
 * The runbook's uninstall ("Uninstalling cleanly", step 4): the DaemonSet first, waiting until its
 * agents have stopped (each drops its gate's finalizer while it still has the rights to), then
 * `kubectl delete -k` of the overlay, waiting until the namespace is gone. A plain `kubectl delete -k`
 * deletes the namespace and the RBAC before the DaemonSet, so the stopping agents can no longer
 * drop the finalizer and the gate pod stays Terminating (seen on the real cluster).
 */
export async function uninstall(r: Real, overlay: Overlay): Promise<void> {
  await r.k.run(['-n', NAMESPACE, 'delete', 'daemonset', 'drainer', '--ignore-not-found', '--wait=true'], {
    timeoutMs: 120_000,
  });
  await r.k.run(
    [
      '-n',
      NAMESPACE,
      'wait',
      '--for=delete',
      'pod',
      '-l',
      'app.kubernetes.io/name=drainer,app.kubernetes.io/component!=drain-gate',
      '--timeout=120s',
    ],
    { timeoutMs: 150_000 },
  );
  await r.k.ok(['delete', '-k', overlay.dir, '--ignore-not-found', '--wait=true'], { timeoutMs: 300_000 });
  await waitFor(async () => ((await r.k.get(['namespace', NAMESPACE])) ? undefined : true), {
    what: `namespace ${NAMESPACE} to be gone`,
    timeoutMs: 180_000,
  });
}

/** The overlay of a previous run, for a clean start: removes drainer if a run left it installed. */
export async function removeLeftovers(r: Real): Promise<void> {
  if (!(await r.k.get(['namespace', NAMESPACE]))) return;
  const overlay = writeOverlay(REPO, r.env, readOpenrc(r.env.openrc), apiServer(r.env.kubeconfig));
  try {
    await uninstall(r, overlay);
  } finally {
    overlay.remove();
  }
}

/** The overlay written again (same content, or with a case's additions) for a later file, which did not install it. */
export function currentOverlay(r: Pick<Real, 'env'>, opts: OverlayOptions = {}): Overlay {
  return writeOverlay(REPO, r.env, readOpenrc(r.env.openrc), apiServer(r.env.kubeconfig), opts);
}

/**
 * `kubectl apply -k` of the overlay with a case's additions (none: the suite's own again), as an operator
 * changes an install; waits until the DaemonSet's rollout is done and an agent of the new template is Ready.
 */
export async function reapply(
  r: Pick<Real, 'env' | 'k' | 'cluster'>,
  opts: OverlayOptions = {},
): Promise<void> {
  const overlay = currentOverlay(r, opts);
  try {
    await r.k.ok(['apply', '-k', overlay.dir]);
  } finally {
    overlay.remove();
  }
  await r.k.ok(['rollout', 'status', 'ds/drainer', '-n', NAMESPACE, '--timeout=300s'], {
    timeoutMs: 310_000,
  });
  await waitFor(async () => ((await r.cluster.readyAgent()) ? true : undefined), {
    what: `a Ready drainer agent on ${r.env.node}`,
    timeoutMs: 180_000,
    intervalMs: 250,
  });
}
