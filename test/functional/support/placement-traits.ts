// What Nova and Placement say about one compute host (support/placeable.ts decides whether they agree).
import type { HostView } from './placeable.ts';
import { computeService } from './nova.ts';
import { expectStatus, type Session } from './session.ts';

const TRAITS_MV = '1.6';
/** Hypervisors by service host, with the compute node's UUID as id (the provider's UUID in Placement). */
const HYPERVISORS_MV = '2.53';

async function providerOf(admin: Session, uuid: string): Promise<HostView['provider']> {
  const inv = await admin.request('placement', 'GET', `/resource_providers/${uuid}/inventories`, {
    microversion: TRAITS_MV,
  });
  if (inv.status === 404) return undefined;
  const traits = expectStatus(
    await admin.request('placement', 'GET', `/resource_providers/${uuid}/traits`, {
      microversion: TRAITS_MV,
    }),
    `traits of provider ${uuid}`,
    200,
  ).body.traits as string[];
  const inventory = Object.keys(expectStatus(inv, `inventory of provider ${uuid}`, 200).body.inventories);
  return { inventory, traits };
}

export async function hostView(admin: Session, host: string): Promise<HostView> {
  const svc = await computeService(admin, host);
  const hypervisors = expectStatus(
    await admin.request('compute', 'GET', '/os-hypervisors/detail', { microversion: HYPERVISORS_MV }),
    'list hypervisors',
    200,
  ).body.hypervisors as { id: string; service?: { host?: string } }[];
  const node = hypervisors.find((h) => h.service?.host === host);
  const provider = node ? await providerOf(admin, node.id) : undefined;
  return {
    serviceEnabled: svc.status === 'enabled',
    serviceUp: svc.state === 'up',
    ...(provider ? { provider } : {}),
  };
}
