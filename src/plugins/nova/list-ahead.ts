// The host's first listing, sent beside the disable of its nova-compute rather than after it (issue
// 51: one Nova answer less before the first move, 0.6-2 s on a loaded stack). The migrator's first
// listing of the host is this one. A server scheduled onto the host before the disable took may be
// missing from it, so it never ends an evacuation alone (MigratorOptions.listedAhead): a listing
// made after the disable does.
import type { ComputeClient } from './compute.ts';
import { overriding } from './override.ts';
import type { NovaServer } from './types.ts';

type Listing = Pick<ComputeClient, 'listServersOnHost'>;

/** `compute`, whose first listing of `host` is the one sent now. */
export function listAhead<C extends Listing>(compute: C, host: string, signal: AbortSignal): C {
  let novaNow: number | undefined;
  let ahead: Promise<NovaServer[]> | undefined = compute.listServersOnHost(
    host,
    signal,
    (ms) => (novaNow ??= ms),
  );
  // unread when the disable fails: the disable's error is the one said
  ahead.catch(() => undefined);
  const listServersOnHost = async (
    h: string,
    s?: AbortSignal,
    onNovaNow?: (ms: number) => void,
  ): Promise<NovaServer[]> => {
    const first = h === host ? ahead : undefined;
    if (!first) return compute.listServersOnHost(h, s, onNovaNow);
    ahead = undefined;
    const servers = await first;
    if (novaNow !== undefined) onNovaNow?.(novaNow);
    return servers;
  };
  return overriding(compute, { listServersOnHost });
}
