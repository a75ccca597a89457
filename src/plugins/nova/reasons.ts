// What Nova itself says about a server, carried into its outcome line (and so into the Event
// and `drainer status`): its fault message, and the status of its newest migration record.
import type { SeenRecord } from './records.ts';
import { hostOf, type NovaServer } from './types.ts';

/** Said of a server whose host Nova does not show: it may have moved or not, so it never counts as moved. */
export const HOST_UNKNOWN =
  "host unknown: Nova does not show this server's OS-EXT-SRV-ATTR:host to drainer's credentials " +
  '(admin role or policy os_compute_api:os-extended-server-attributes needed), so whether it moved cannot be told';

/** The host as Nova shows it, or undefined when the attribute is missing (a policy hides it) or null. */
export const knownHost = (s: NovaServer): string | undefined => {
  const h = hostOf(s);
  return typeof h === 'string' && h !== '' ? h : undefined;
};

/** "; Nova: No valid host was found (migration 12 error)", or "" when Nova said nothing. */
export function novaSays(s: NovaServer, record?: Pick<SeenRecord, 'id' | 'status'>): string {
  const fault = s.fault?.message?.trim();
  const rec = record ? `migration ${record.id} ${record.status}` : '';
  if (fault && rec) return `; Nova: ${fault} (${rec})`;
  if (fault) return `; Nova: ${fault}`;
  return rec ? ` (${rec})` : '';
}
