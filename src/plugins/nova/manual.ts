// Node mode manual (drainer.dev/migration-mode=manual): the operator moves the servers with their
// own tools. drainer has disabled nova-compute (so nothing new lands) and only watches the host
// until it is empty; the evacuation, and so the drain gate, waits for that.
import { waitUntilEmpty } from '../../core/backends/manual-wait.ts';
import type { EvacuationContext, Outcome, WorkloadProgress } from '../../core/backends/plugin.ts';
import { isAuthError, isForbiddenError } from '../../errors.ts';
import { MIGRATION_MODE_KEY } from '../../names.ts';
import type { NovaConfig } from '../../config/schema.ts';
import type { ComputeClient } from './compute.ts';
import type { Sleep } from './http.ts';
import { hostOf, type NovaServer } from './types.ts';

const GONE = new Set(['DELETED', 'SOFT_DELETED']);

export async function waitForOthers(
  plugin: string,
  host: string,
  node: string,
  o: {
    compute: Pick<ComputeClient, 'listServersOnHost'>;
    nova: Pick<NovaConfig, 'pollInterval'>;
    sleep: Sleep;
    now: () => number;
  },
  ctx: EvacuationContext,
): Promise<Outcome> {
  const seen = new Map<string, string>();
  const left = await waitUntilEmpty(
    {
      list: async (signal) =>
        (await o.compute.listServersOnHost(host, signal)).filter(
          (s) => !GONE.has(s.status) && hostOf(s) === host,
        ),
      retryable: (err) => !isAuthError(err) && !isForbiddenError(err),
      listFailed: 'listing the host failed; trying again',
      listed: (servers) => {
        for (const s of servers) seen.set(s.id, s.name);
        ctx.progress(progress(seen, servers, host));
      },
      now: o.now,
      sleep: (signal) => o.sleep(o.nova.pollInterval * 1000, signal),
    },
    ctx,
  );
  const workloads = progress(seen, left, host);
  const names = left.map((s) => `${s.name} (${s.status})`);
  return {
    plugin,
    succeeded: left.length === 0 && !ctx.signal.aborted,
    workloads,
    message:
      left.length === 0
        ? `node ${MIGRATION_MODE_KEY}=manual: ${host} is empty; ${seen.size} server(s) moved by someone else`
        : `node ${node} ${MIGRATION_MODE_KEY}=manual: still on ${host}: ${names.join(', ')}`,
  };
}

function progress(seen: Map<string, string>, left: readonly NovaServer[], host: string): WorkloadProgress[] {
  const here = new Set(left.map((s) => s.id));
  return [...seen].map(([id, name]) => ({
    id,
    name,
    state: here.has(id) ? 'pending' : 'succeeded',
    action: 'external',
    source: host,
    attempts: 0,
    message: here.has(id)
      ? `waiting for someone else to move it (node ${MIGRATION_MODE_KEY}=manual)`
      : 'moved off the host by someone else',
  }));
}
