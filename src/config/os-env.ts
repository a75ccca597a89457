// OS_* variables, as openrc files and the openstack CLI set them.
import { applyDomainDefaults, AUTH_KEYS, normalizeInterface, parseInsecure } from './openstack-keys.ts';
import { compact, type Layer } from './merge.ts';

/** The openstack block the OS_* environment describes (only keys that are set). */
export function readOsEnv(env: NodeJS.ProcessEnv): Layer {
  const auth: Layer = {};
  for (const [snake, key] of Object.entries(AUTH_KEYS)) {
    const v = env[`OS_${snake.toUpperCase()}`];
    if (v !== undefined && v !== '') auth[key] ??= v;
  }
  applyDomainDefaults(auth, env.OS_DOMAIN_ID || undefined, env.OS_DOMAIN_NAME || undefined);
  const iface = env.OS_INTERFACE || env.OS_ENDPOINT_TYPE || undefined;
  return compact({
    auth,
    regionName: env.OS_REGION_NAME || undefined,
    interface: iface === undefined ? undefined : normalizeInterface(iface),
    cacert: env.OS_CACERT || undefined,
    cert: env.OS_CERT || undefined,
    key: env.OS_KEY || undefined,
    insecure: env.OS_INSECURE ? parseInsecure(env.OS_INSECURE) : undefined,
  });
}
