// Nova's capacity verdict: the servers that must move (their flavors) against the room the other
// usable compute hosts have left in Placement, packed first-fit-decreasing. Read-only.
import { isNotFoundError } from '../../errors.ts';
import type { CapacityVerdict } from '../../core/backends/plugin.ts';
import { pack, type Bin, type Item } from '../capacity/pack.ts';
import { unlessUnavailable, verdictOf } from '../capacity/verdict.ts';
import type { ComputeClient } from './compute.ts';
import { roomOf, type PlacementClient } from './placement.ts';
import type { NovaFlavorRef, NovaServer, NovaServerGroup, NovaService } from './types.ts';
import { hostOf } from './types.ts';

const CLASSES = ['VCPU', 'MEMORY_MB', 'DISK_GB'] as const;
const PROVIDERS_AT_ONCE = 8;

export interface NovaCapacityInput {
  readonly compute: ComputeClient;
  readonly placement: PlacementClient;
  /** The service host being evacuated. */
  readonly source: string;
  /** The servers that will be migrated (not those already migrating). */
  readonly servers: readonly NovaServer[];
  readonly signal: AbortSignal;
}

const gib = (mb: number) => `${Number((mb / 1024).toFixed(1))} GiB RAM`;

export const describeNova = (cls: string, n: number): string =>
  cls === 'VCPU'
    ? `${n} vCPU`
    : cls === 'MEMORY_MB'
      ? gib(n)
      : cls === 'DISK_GB'
        ? `${n} GB disk`
        : `${n} ${cls}`;

const bootedFromVolume = (s: NovaServer) =>
  s.image === '' || s.image === null || (typeof s.image === 'object' && !s.image?.id);

const swapGb = (f: NovaFlavorRef) => Math.ceil((Number(f.swap) || 0) / 1024);

/** What Nova's scheduler asks Placement for: root disk only when it is local. */
export function needsOf(s: NovaServer, f: NovaFlavorRef): Record<string, number> {
  const ephemeral = f.ephemeral ?? f['OS-FLV-EXT-DATA:ephemeral'] ?? 0;
  const disk = (bootedFromVolume(s) ? 0 : (f.disk ?? 0)) + ephemeral + swapGb(f);
  return { VCPU: f.vcpus ?? 0, MEMORY_MB: f.ram ?? 0, DISK_GB: disk };
}

/** A hard anti-affinity group (2.64 `policy`, older `policies`); soft ones do not bind. */
export const isAntiAffinity = (g: NovaServerGroup): boolean =>
  g.policy === 'anti-affinity' || (g.policies ?? []).includes('anti-affinity');

/** Usable destinations: enabled, up, not forced down, not the source (a host being evacuated is disabled). */
export const usableServices = (services: readonly NovaService[], source: string): NovaService[] =>
  services.filter(
    (s) => s.host !== source && s.status === 'enabled' && s.state !== 'down' && s.forced_down !== true,
  );

async function flavors(input: NovaCapacityInput): Promise<Map<string, NovaFlavorRef>> {
  const out = new Map<string, NovaFlavorRef>();
  const byId = new Map<string, Promise<NovaFlavorRef | undefined>>();
  const waiting: { id: string; flavor: string }[] = [];
  for (const s of input.servers) {
    const f = s.flavor ?? {};
    if (f.vcpus !== undefined && f.ram !== undefined) out.set(s.id, f);
    else if (f.id) {
      // before 2.47 only the id: one flavor request per distinct flavor, all side by side
      const id = f.id;
      // a flavor deleted since the boot is gone from the API: that server's size is unknown
      if (!byId.has(id))
        byId.set(
          id,
          input.compute.getFlavor(id, input.signal).catch((err: unknown) => {
            if (isNotFoundError(err)) return undefined;
            throw err;
          }),
        );
      waiting.push({ id: s.id, flavor: id });
    }
  }
  const found = await Promise.all(waiting.map((w) => byId.get(w.flavor)!));
  waiting.forEach((w, i) => {
    const flavor = found[i];
    if (flavor) out.set(w.id, flavor);
  });
  return out;
}

/** Anti-affinity groups of moving servers, and where their other members already are. */
async function groups(
  input: NovaCapacityInput,
): Promise<{ of: Map<string, string>; hostsOf: Map<string, string[]> }> {
  const moving = new Set(input.servers.map((s) => s.id));
  const of = new Map<string, string>();
  const hostsOf = new Map<string, string[]>();
  const relevant = (await input.compute.listServerGroups(input.signal)).filter(
    (g) => isAntiAffinity(g) && (g.members ?? []).some((m) => moving.has(m)),
  );
  // the other members' hosts side by side: each is one GET, and this is on the way to the disable
  const others = await Promise.all(
    relevant.map((g) =>
      Promise.all(
        (g.members ?? [])
          .filter((m) => !moving.has(m))
          .map((m) => input.compute.getServer(m, input.signal).catch(() => undefined)),
      ),
    ),
  );
  relevant.forEach((g, i) => {
    for (const m of g.members ?? []) if (moving.has(m)) of.set(m, g.id);
    for (const other of others[i] ?? []) {
      const host = other && hostOf(other);
      if (host && host !== input.source) hostsOf.set(host, [...(hostsOf.get(host) ?? []), g.id]);
    }
  });
  return { of, hostsOf };
}

async function bins(
  input: NovaCapacityInput,
  services: readonly NovaService[],
  hostsOf: Map<string, string[]>,
  providers: Awaited<ReturnType<PlacementClient['providers']>>,
  hypervisors: Awaited<ReturnType<ComputeClient['listAllHypervisors']>>,
): Promise<Bin[]> {
  const { placement, signal } = input;
  const targets = services.flatMap((svc) => {
    const names = hypervisors.filter((h) => h.service?.host === svc.host).map((h) => h.hypervisor_hostname);
    if (!names.length) names.push(svc.host);
    return providers.filter((p) => names.includes(p.name)).map((rp) => ({ svc, rp }));
  });
  const out: Bin[] = [];
  // a few providers at a time: two requests each, and large clouds have hundreds
  for (let i = 0; i < targets.length; i += PROVIDERS_AT_ONCE) {
    const batch = targets.slice(i, i + PROVIDERS_AT_ONCE);
    const rooms = await Promise.all(
      batch.map(async ({ rp }) => {
        const [inv, used] = await Promise.all([
          placement.inventories(rp.uuid, signal),
          placement.usages(rp.uuid, signal),
        ]);
        return roomOf(inv, used);
      }),
    );
    batch.forEach(({ svc }, j) => {
      const { free, maxUnit } = rooms[j]!;
      out.push({
        name: svc.host,
        free: Object.fromEntries(CLASSES.map((c) => [c, free[c] ?? 0])),
        maxUnit,
        ...(svc.zone ? { zone: svc.zone } : {}),
        groups: hostsOf.get(svc.host) ?? [],
      });
    });
  }
  return out;
}

function zoneOf(s: NovaServer): string | undefined {
  if ('pinned_availability_zone' in s) return s.pinned_availability_zone ?? undefined;
  return s['OS-EXT-AZ:availability_zone'] ?? undefined;
}

export async function novaCapacity(input: NovaCapacityInput): Promise<CapacityVerdict> {
  const { compute, placement, signal } = input;
  // nothing to place: no need to ask anyone
  if (input.servers.length === 0) return { status: 'fits', message: 'nova: nothing to move' };
  return unlessUnavailable(signal, async () => {
    if (!(await placement.available(signal))) {
      return {
        status: 'unknown',
        reason: 'unsupported',
        message: 'the Keystone catalog has no placement service; capacity not checked',
      };
    }
    // every read that does not need another's answer at once: the check sits between the cordon
    // and the nova-compute disable
    const [listed, sizes, grouping, providers, hypervisors] = await Promise.all([
      compute.listComputeServices(signal),
      flavors(input),
      groups(input),
      placement.providers(signal),
      compute.listAllHypervisors(signal),
    ]);
    const services = usableServices(listed, input.source);
    const items: Item[] = input.servers.map((s) => {
      const zone = zoneOf(s);
      const group = grouping.of.get(s.id);
      const flavor = sizes.get(s.id);
      return {
        id: s.id,
        name: s.name,
        needs: flavor ? needsOf(s, flavor) : {},
        ...(zone ? { zone } : {}),
        ...(group ? { antiAffinity: group } : {}),
      };
    });
    const hosts = await bins(input, services, grouping.hostsOf, providers, hypervisors);
    return verdictOf({
      plugin: 'nova',
      noun: 'server',
      packing: pack(items, hosts),
      hosts: hosts.length,
      describe: describeNova,
    });
  });
}
