// Names shared by the clouds.yaml and OS_* readers (both use keystoneauth's snake_case names).
import { parseBool } from './env.ts';
import type { Layer } from './merge.ts';

/** keystoneauth auth option (snake_case) → our openstack.auth key. Older tenant_* names included. */
export const AUTH_KEYS: Readonly<Record<string, string>> = {
  auth_url: 'authUrl',
  username: 'username',
  user_name: 'username',
  user_id: 'userId',
  password: 'password',
  user_domain_name: 'userDomainName',
  user_domain_id: 'userDomainId',
  project_name: 'projectName',
  tenant_name: 'projectName',
  project_id: 'projectId',
  tenant_id: 'projectId',
  project_domain_name: 'projectDomainName',
  project_domain_id: 'projectDomainId',
  application_credential_id: 'applicationCredentialId',
  application_credential_name: 'applicationCredentialName',
  application_credential_secret: 'applicationCredentialSecret',
};

/** "internalURL" (old endpoint_type style) → "internal"; other values pass to the schema as given. */
export function normalizeInterface(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const m = /^(public|internal|admin)(url)?$/i.exec(v.trim());
  return m?.[1] ? m[1].toLowerCase() : v;
}

/** keystoneauth's domain_id/domain_name fill the user and project domain when those are unset. */
export function applyDomainDefaults(auth: Layer, domainId: unknown, domainName: unknown): void {
  if (domainId !== undefined) {
    auth.userDomainId ??= domainId;
    auth.projectDomainId ??= domainId;
  }
  if (domainName !== undefined) {
    auth.userDomainName ??= domainName;
    auth.projectDomainName ??= domainName;
  }
}

export function parseInsecure(v: unknown): unknown {
  if (typeof v === 'string') return parseBool(v) ?? v;
  return v;
}
