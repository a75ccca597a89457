// What a scenario means for the OpenStack emulation, and the drainer config that points at it all.
import { randomUUID } from 'node:crypto';
import type { Clock } from './clock.ts';
import type { OpenStackSandbox, StartOpenStackOptions } from './openstack/index.ts';
import type { Scenario } from './scenario.ts';

export function openstackOptions(s: Scenario, clock: Clock, port?: number): StartOpenStackOptions {
  const o = s.openstack;
  const ids = new Map<string, string>(o.servers.map((sv) => [sv.name, randomUUID()]));
  const idsOf = (names: string[]) => new Set<string | undefined>(names.map((n) => ids.get(n)));
  const failing = idsOf(o.faults.failMigrations);
  const hanging = idsOf(o.faults.hangMigrations);
  const dropping = idsOf(o.faults.dropActionAnswers);
  const erroring = new Map(
    Object.entries(o.faults.errorMigrations).map(([name, m]): [string | undefined, string] => [
      ids.get(name),
      m,
    ]),
  );
  const ahead = new Map(
    Object.entries(o.faults.clockAheadSeconds).map(([name, s]): [string | undefined, number] => [
      ids.get(name),
      s,
    ]),
  );
  const unmoved = idsOf(o.faults.completeWithoutMove);
  return {
    clock,
    port: port ?? o.port,
    region: o.region,
    maxMicroversion: o.maxMicroversion,
    tokenTtlSeconds: o.tokenTtlSeconds,
    hosts: o.hosts.map((h) => ({
      name: h.name,
      ...(h.hypervisorHostname ? { hypervisorHostname: h.hypervisorHostname } : {}),
      maxConcurrentLiveMigrations: h.maxConcurrentLiveMigrations,
      ramMb: h.ramMb,
      vcpus: h.vcpus,
      diskGb: h.diskGb,
      ...(h.disabledReason ? { disabled: { reason: h.disabledReason } } : {}),
      ...(h.migrationMbPerSecond !== undefined ? { migrationMbPerSecond: h.migrationMbPerSecond } : {}),
      completionTimeoutSecondsPerGiB: h.completionTimeoutSecondsPerGiB,
      timeoutAction: h.timeoutAction,
    })),
    servers: o.servers.map((sv) => ({
      id: ids.get(sv.name) ?? randomUUID(),
      name: sv.name,
      projectId: sv.project,
      host: sv.host,
      status: sv.state,
      ramMb: sv.ramMb,
      vcpus: sv.vcpus,
      diskGb: sv.diskGb,
      bootFromVolume: sv.bootFromVolume,
      migrationMs: (sv.migrationSeconds ?? o.migrationSeconds) * 1000,
      dirtyMbPerSecond: sv.dirtyMbPerSecond,
      ...(sv.shutdownSeconds !== undefined ? { shutdownMs: sv.shutdownSeconds * 1000 } : {}),
      locked: sv.locked,
      ...(sv.metadata ? { metadata: sv.metadata } : {}),
    })),
    faults: {
      errorRate: o.faults.errorRate,
      latencyMs: o.faults.latencyMs,
      failMigrations: (id) => failing.has(id),
      hangMigrations: (id) => hanging.has(id),
      hideHost: o.faults.hideHost,
      errorMigrations: (id) => erroring.get(id),
      clockAheadMs: (id) => (ahead.get(id) ?? 0) * 1000,
      dropAnswer: (method, path) => {
        const id = method === 'POST' ? /\/servers\/([^/]+)\/action$/.exec(path)?.[1] : undefined;
        if (!id || !dropping.has(id)) return false;
        dropping.delete(id); // the first answer only
        return true;
      },
      completeWithoutMove: (id) => unmoved.has(id),
    },
    timings: {
      shutdownMs: o.shutdownSeconds * 1000,
      powerOnMs: o.powerOnSeconds * 1000,
      shelvedOffloadMs: o.shelvedOffloadSeconds < 0 ? -1 : o.shelvedOffloadSeconds * 1000,
    },
  };
}

/** The `openstack:` block of a drainer config that signs in to this sandbox's Keystone as admin. */
export function openstackConfigFor(openstack: OpenStackSandbox): Record<string, unknown> {
  const admin = openstack.credentials.admin;
  return {
    auth: {
      authUrl: openstack.identityUrl,
      username: admin.username,
      password: admin.password,
      projectName: admin.project,
      userDomainName: admin.domain,
      projectDomainName: admin.domain,
    },
    regionName: openstack.region,
  };
}

/** A drainer config (the input form of src/config/schema.ts) for this sandbox. */
/**
 * A live migration whose memory left has not fallen for this long (simulated) is stalled: short,
 * so the demo's busy server is forced to complete within seconds.
 */
const SANDBOX_STALL_SECONDS = 10;

export function drainerConfigFor(
  s: Scenario,
  openstack: OpenStackSandbox,
  scale = s.clock.scale,
): Record<string, unknown> {
  const hostMapping = Object.fromEntries(s.nodes.filter((n) => n.novaHost).map((n) => [n.name, n.novaHost]));
  return {
    logLevel: 'info',
    resyncInterval: 30,
    openstack: { ...openstackConfigFor(openstack), interface: 'public' },
    nova: {
      enabled: s.openstack.hosts.length > 0,
      hostMapping,
      pollInterval: 0.5,
      retryBackoff: 2,
      stallAfter: Math.max(0.5, SANDBOX_STALL_SECONDS / scale),
    },
    kubevirt: { enabled: s.kubevirt.installed, trigger: 'taint' },
    drain: { evictionRetryInterval: 1 },
  };
}
