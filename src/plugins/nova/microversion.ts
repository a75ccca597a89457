// Compute microversions are "2.N"; compare them by N.

/** The newest compute microversion drainer knows; later servers are spoken to at this one. */
export const MAX_SUPPORTED_MINOR = 100;

export function minorOf(version: string): number {
  const m = /^2\.(\d+)$/.exec(version.trim());
  if (!m) throw new RangeError(`not a compute microversion: "${version}"`);
  return Number(m[1]);
}

/**
 * The highest microversion both sides accept: ≤ the server's max, ≤ what we support,
 * ≤ the configured cap. A server without microversions (empty `version`) is 2.1.
 */
export function negotiate(serverMax: string | undefined, cap?: string): number {
  let minor = serverMax ? minorOf(serverMax) : 1;
  minor = Math.min(minor, MAX_SUPPORTED_MINOR);
  if (cap) minor = Math.min(minor, minorOf(cap));
  return Math.max(1, minor);
}

/** The version root of a compute endpoint: ".../v2.1/<project_id>" → ".../v2.1". */
export function versionRoot(endpoint: string): string {
  const u = new URL(endpoint);
  const m = /^(.*?\/v2(?:\.1)?)(?:\/.*)?$/.exec(u.pathname);
  u.pathname = m?.[1] ?? u.pathname.replace(/\/+$/, '');
  u.search = '';
  return u.toString().replace(/\/+$/, '');
}
