// A sandbox OpenStack named the way the functional suite names a real cloud, so the same script runs
// against both.
import type { OpenStackSandbox } from '../../../src/sandbox/openstack/types.ts';
import type { CloudEnv } from './cloud-env.ts';

export function sandboxCloud(os: OpenStackSandbox, who: 'admin' | 'demo' = 'admin'): CloudEnv {
  const c = os.credentials[who];
  return {
    auth: {
      authUrl: os.identityUrl,
      username: c.username,
      password: c.password,
      userDomainName: c.domain,
      projectName: c.project,
      projectDomainName: c.domain,
    },
    regionName: os.region,
    interface: 'public',
    source: 'sandbox emulation',
  };
}
