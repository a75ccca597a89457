// The top-level keys of nova-kubernetes-drain's config file, so its config keeps working.
import { type Layer, compact } from './merge.ts';

export const LEGACY_KEYS = ['IdentityEndpoint', 'Username', 'Password', 'TenantName', 'DomainID'] as const;

/** Splits a config file object into our keys and the openstack block its legacy keys describe. */
export function extractLegacy(file: Layer): { rest: Layer; openstack: Layer | undefined } {
  const rest: Layer = { ...file };
  const found = LEGACY_KEYS.filter((k) => k in file);
  if (found.length === 0) return { rest, openstack: undefined };
  for (const k of found) delete rest[k];
  const domain = file.DomainID;
  const openstack = compact({
    auth: {
      authUrl: file.IdentityEndpoint,
      username: file.Username,
      password: file.Password,
      projectName: file.TenantName,
      userDomainId: domain,
      projectDomainId: domain,
    },
    // The old tool always used the internal endpoints (it ran inside the cloud's network).
    interface: 'internal',
  });
  return { rest, openstack };
}
