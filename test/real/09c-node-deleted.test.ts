// A Node deleted right after drainer stopped a server (issue 48): a `stop`-policy server on a node whose
// maintenance is declared a reboot is stopped, not moved, and the Node's record was its only list until the
// stop mark (Nova metadata `drainer.dev:stopped`). `kubectl delete node` takes the record, the cordon and the
// labels; the kubelet registers the Node again (a kubelet v1.26 does so only when it starts: the case restarts
// it, as a re-installed node would) and the Node comes back schedulable. The agent of the host finds the mark
// and starts the server: ACTIVE in Nova, the mark gone, nova-compute enabled.
import { describe, expect, it } from 'vitest';
import { getServer } from '../functional/support/nova.ts';
import { expectStatus } from '../functional/support/session.ts';
import { waitFor } from '../functional/support/wait.ts';
import { figure, seconds, useReal, type Real } from './support/context.ts';
import { kubeletRestart } from './support/kit.ts';
import { NODE_LABEL } from './support/overlay.ts';

const real = useReal();
const STOPPED = 'drainer.dev:stopped';
const REBOOT = 'drainer.dev/reboot';

async function metadata(r: Real, id: string): Promise<Record<string, string>> {
  const res = await r.nova.admin.request('compute', 'GET', `/servers/${id}/metadata`);
  return expectStatus(res, `metadata of server ${id}`, 200).body.metadata as Record<string, string>;
}

/** The Node registered again and labelled for the DaemonSet, as the install did (the deletion took it). */
async function nodeBack(r: Real, restart: () => Promise<void>): Promise<void> {
  if (!(await r.k.get(['node', r.env.node]))) await restart();
  await r.k.ok(['label', 'node', r.env.node, `${NODE_LABEL.key}=${NODE_LABEL.value}`, '--overwrite']);
}

describe('a Node deleted right after drainer stopped a server for a declared reboot', () => {
  it('starts the server again once the Node is registered anew: ACTIVE in Nova, its stop mark gone', async (ctx) => {
    const r = real();
    const restartKubelet = kubeletRestart();
    r.expect4xx(404, /^\/api\/v1\/nodes\//, 'the case deletes the Node under the agent');
    await r.cluster.waitGateHeld();
    const [server] = await r.nova.boot('node-deleted', 1);
    expectStatus(
      await r.nova.admin.request('compute', 'POST', `/servers/${server!.id}/metadata`, {
        json: { metadata: { 'drainer.dev:maintenance': 'stop' } },
      }),
      'set the stop policy',
      200,
    );
    await r.k.ok(['label', 'node', r.env.node, `${REBOOT}=true`, '--overwrite']);
    try {
      await r.cluster.cordon();
      // right after the stop: the server is off on the host, and its mark says drainer stopped it
      const stopped = await waitFor(
        async () => {
          const s = await getServer(r.nova.admin, server!.id);
          return s?.status === 'SHUTOFF' && s.taskState === null && (await metadata(r, s.id))[STOPPED]
            ? s
            : undefined;
        },
        { what: `server ${server!.name} stopped by drainer, with its mark`, timeoutMs: 300_000 },
      );
      expect(stopped.host).toBe(r.nova.host);
      figure(ctx, 'phase when the Node was deleted', (await r.cluster.phase()) ?? '(in service)');

      const deletedAt = Date.now();
      await r.k.ok(['delete', 'node', r.env.node]);
      await nodeBack(r, restartKubelet);
      figure(
        ctx,
        'Node deleted to registered again (kubelet restart)',
        `${seconds(Date.now() - deletedAt)} s`,
      );
      const node = await r.cluster.node();
      expect(node.metadata.annotations?.['drainer.dev/state']).toBeUndefined();
      expect(node.spec.unschedulable).toBeFalsy();

      const running = await waitFor(
        async () => {
          const s = await getServer(r.nova.admin, server!.id);
          return s?.status === 'ACTIVE' && s.taskState === null ? s : undefined;
        },
        { what: `server ${server!.name} ACTIVE again`, timeoutMs: 300_000 },
      );
      figure(ctx, 'Node deleted to the server ACTIVE again', `${seconds(Date.now() - deletedAt)} s`);
      expect(running.host).toBe(r.nova.host);
      await waitFor(async () => ((await metadata(r, server!.id))[STOPPED] ? undefined : true), {
        what: `the ${STOPPED} mark of ${server!.name} removed`,
        timeoutMs: 60_000,
      });
      await waitFor(async () => ((await r.nova.service()).status === 'enabled' ? true : undefined), {
        what: `nova-compute on ${r.nova.host} enabled again`,
        timeoutMs: 120_000,
      });
      await r.cluster.waitGateHeld();
    } finally {
      await nodeBack(r, restartKubelet);
      await r.k.run(['label', 'node', r.env.node, `${REBOOT}-`]);
    }
  });
});
