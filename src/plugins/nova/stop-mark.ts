// drainer's mark on a server it stops (way out stop): the Nova metadata item drainer.dev:stopped,
// set before the os-stop, so that the memory of the stop lives on the server itself and not only in
// the Node's record (a Node deleted and registered again takes its record along). Whoever restores
// the host where the server is now starts it (restart.ts, marked.ts), and takes the mark off once
// it runs or its owner took it over.
//
// The value names the maintenance and the stop: `node=<node> trigger=<trigger> after=<request id>
// request=<request id>`. `after` is the newest entry of the server's action log before the stop
// (so the stop is the first power action after it, even before its own id is known); `request` is
// the stop's own request id, written once the stop is over (Nova refuses a metadata write while the
// server powers off).
import { ApiError, isConflictError, isForbiddenError, isNotFoundError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import type { ComputeClient } from './compute.ts';
import type { NovaServer } from './types.ts';

/** The metadata key (Nova's keys allow no "/", hence the colon, as drainer.dev:maintenance). */
export const STOP_MARK_KEY = 'drainer.dev:stopped';

export interface StopMark {
  readonly node: string;
  readonly trigger: string;
  /** The request id of the newest action in the server's log before the stop ("" for none). */
  readonly after?: string;
  /** The stop's own request id, once known. */
  readonly request?: string;
}

/** Nova's limit on a metadata value. */
const MAX_VALUE = 255;
const FIELDS = ['node', 'trigger', 'after', 'request'] as const;

/** Spaces would split a field: a trigger names a NodeMaintenance, which has none. */
const clean = (s: string, max: number) => s.replace(/\s+/g, '_').slice(0, max);

export function formatStopMark(m: StopMark): string {
  const ids = [
    m.after !== undefined ? `after=${m.after || '-'}` : '',
    m.request ? `request=${m.request}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  // the ids decide whose the SHUTOFF is, so they are kept whole; node and trigger only tell who
  const room = Math.max(16, MAX_VALUE - ids.length - 'node= trigger= '.length);
  const node = clean(m.node, Math.ceil(room / 2));
  const trigger = clean(m.trigger, room - node.length);
  return [`node=${node}`, `trigger=${trigger}`, ids].filter(Boolean).join(' ').slice(0, MAX_VALUE);
}

/** The mark on a server, or undefined when it carries none. */
export function stopMarkOf(s: Pick<NovaServer, 'metadata'>): StopMark | undefined {
  const text = s.metadata?.[STOP_MARK_KEY];
  if (text === undefined) return undefined;
  const fields: Partial<Record<(typeof FIELDS)[number], string>> = {};
  for (const part of text.split(' ')) {
    const at = part.indexOf('=');
    const key = part.slice(0, at) as (typeof FIELDS)[number];
    if (at > 0 && FIELDS.includes(key)) fields[key] = part.slice(at + 1);
  }
  return {
    node: fields.node ?? '',
    trigger: fields.trigger ?? '',
    ...(fields.after !== undefined ? { after: fields.after === '-' ? '' : fields.after } : {}),
    ...(fields.request ? { request: fields.request } : {}),
  };
}

type MarkCompute = Pick<
  ComputeClient,
  'setServerMetadataItem' | 'deleteServerMetadataItem' | 'listInstanceActions'
>;

/** Sets the mark; a refusal other than a busy server (409) ends as a plain API error: the stop is not made. */
export async function setStopMark(
  compute: MarkCompute,
  id: string,
  mark: StopMark,
  signal?: AbortSignal,
): Promise<void> {
  try {
    await compute.setServerMetadataItem(id, STOP_MARK_KEY, formatStopMark(mark), signal);
  } catch (err) {
    // a 403 here is Nova's metadata quota or policy, not drainer's credentials: that server is not stopped
    if (!isForbiddenError(err)) throw err;
    throw new ApiError('API', `could not mark the server before its stop: ${(err as Error).message}`, {
      api: 'nova',
    });
  }
}

/** Takes the mark off; a server gone or busy keeps it (the next look at it takes it off). */
export async function removeStopMark(
  compute: MarkCompute,
  s: Pick<NovaServer, 'id' | 'metadata'>,
  log: Logger,
  signal?: AbortSignal,
): Promise<void> {
  if (!stopMarkOf(s)) return;
  try {
    await compute.deleteServerMetadataItem(s.id, STOP_MARK_KEY, signal);
  } catch (err) {
    if (signal?.aborted || !(isConflictError(err) || isNotFoundError(err) || isForbiddenError(err)))
      throw err;
    log.info({ server: s.id, reason: err.message }, 'drainer’s stop mark left on the server for now');
  }
}

/** The newest entry of the server's action log ("" for none), or undefined when drainer may not read it. */
export async function newestAction(
  compute: MarkCompute,
  id: string,
  signal?: AbortSignal,
): Promise<string | undefined> {
  try {
    return (await compute.listInstanceActions(id, signal))[0]?.request_id ?? '';
  } catch (err) {
    if (isForbiddenError(err) || isNotFoundError(err)) return undefined;
    throw err;
  }
}
