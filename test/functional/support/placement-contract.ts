// The capacity check's calls in the contract script: Placement (its own version document and
// microversion, providers, inventories, usages, its error shapes) and the Nova reads that size the
// servers and find the destinations (all compute services, hypervisors, flavors, server groups).
import type { ContractSide } from './contract.ts';
import { http, type ApiResponse, type Session } from './session.ts';

type Note = (call: string, res: ApiResponse, facts?: Record<string, unknown>) => ApiResponse;

export async function capacityCalls(admin: Session, side: ContractSide, note: Note): Promise<void> {
  const placement = admin.endpoint('placement');
  const root = await http.get(placement);
  note('GET <placement endpoint> (no token)', {
    status: root.statusCode,
    body: JSON.parse(root.body),
    headers: root.headers,
  });
  const pl = (mv: string | undefined, path: string) =>
    admin.request('placement', 'GET', path, mv ? { microversion: mv } : {});
  const providers = note('GET resource_providers 1.39', await pl('1.39', '/resource_providers'));
  const names = (providers.body.resource_providers as { name: string }[]).map((p) => p.name);
  // other hosts may exist; the two the tests use must be there, by hypervisor hostname
  const seen = [side.sourceHost, side.targetHost].filter((h) => names.includes(h));
  note('GET resource_providers 1.0 (no version header)', await pl(undefined, '/resource_providers'), {
    hosts: seen,
  });
  const src = (providers.body.resource_providers as { uuid: string; name: string }[]).find(
    (p) => p.name === side.sourceHost,
  );
  if (!src) throw new Error(`${side.label}: no resource provider named ${side.sourceHost}`);
  const inv = note(
    'GET resource_providers/{uuid}/inventories 1.39',
    await pl('1.39', `/resource_providers/${src.uuid}/inventories`),
  );
  note(
    'GET resource_providers/{uuid}/usages 1.39',
    await pl('1.39', `/resource_providers/${src.uuid}/usages`),
    {
      classes: Object.keys(inv.body.inventories ?? {}).sort(),
    },
  );
  note(
    'GET resource_providers/{unknown}/usages',
    await pl('1.39', '/resource_providers/00000000-0000-0000-0000-000000000000/usages'),
  );
  note('GET resource_providers microversion 1.999', await pl('1.999', '/resource_providers'));
  const noToken = await http.get(`${placement}/resource_providers`);
  note('GET resource_providers without token', {
    status: noToken.statusCode,
    body: JSON.parse(noToken.body),
    headers: noToken.headers,
  });

  const nova = (mv: string, path: string) => admin.request('compute', 'GET', path, { microversion: mv });
  note('GET os-services binary=nova-compute 2.93', await nova('2.93', '/os-services?binary=nova-compute'));
  note('GET os-hypervisors/detail 2.93', await nova('2.93', '/os-hypervisors/detail'));
  note('GET os-hypervisors/detail 2.1', await nova('2.1', '/os-hypervisors/detail'));
  const old = await nova('2.46', `/servers/${side.servers.live}`);
  note('GET servers/{id} 2.46 (flavor by id)', old);
  const flavorId = String(old.body.server?.flavor?.id ?? 'none');
  note('GET flavors/{id} 2.46', await nova('2.46', `/flavors/${encodeURIComponent(flavorId)}`));
  for (const mv of ['2.93', '2.60']) {
    const groups = await nova(mv, '/os-server-groups?all_projects=true');
    const ours = (groups.body.server_groups ?? []).filter((g: { id: string }) => g.id === side.serverGroup);
    note(`GET os-server-groups all_projects ${mv}`, { ...groups, body: { server_groups: ours } });
  }
}
