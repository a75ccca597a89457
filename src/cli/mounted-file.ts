// A file the agents read from their mounted Secret (clouds.yaml's `cacert: /etc/openstack/ca.pem`)
// does not exist where a read-only command runs. When the Secret holds it, a local copy stands in:
// a CA bundle is no secret, and its name is its content's hash, so runs share one copy, never stale.
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * `file` as seen inside the agents' container, where the Secret `data` (base64, by key) is mounted
 * at `mount`: a local path to the same bytes, or `file` itself when the Secret does not hold it.
 */
export function localCopy(
  file: string,
  mount: string,
  data: Readonly<Record<string, string>>,
  dir = tmpdir(),
): string {
  const key = file.startsWith(`${mount}/`) ? file.slice(mount.length + 1) : undefined;
  const encoded = key === undefined ? undefined : data[key];
  if (encoded === undefined) return file;
  const bytes = Buffer.from(encoded, 'base64');
  const copy = path.join(
    dir,
    `drainer-${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}-${key}`,
  );
  if (!existsSync(copy)) writeFileSync(copy, bytes, { mode: 0o644 });
  return copy;
}
