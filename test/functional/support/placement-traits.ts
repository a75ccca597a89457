// Whether Placement still marks a compute host's provider disabled (trait COMPUTE_STATUS_DISABLED).
import { expectStatus, type Session } from './session.ts';

const TRAITS_MV = '1.6';

export async function hostDisabledInPlacement(admin: Session, host: string): Promise<boolean> {
  const providers = expectStatus(
    await admin.request('placement', 'GET', '/resource_providers', {
      microversion: TRAITS_MV,
      searchParams: { name: host },
    }),
    `resource provider ${host}`,
    200,
  ).body.resource_providers as { uuid: string }[];
  if (!providers[0]) return false; // a cloud whose provider is named otherwise: nothing to wait for
  const traits = expectStatus(
    await admin.request('placement', 'GET', `/resource_providers/${providers[0].uuid}/traits`, {
      microversion: TRAITS_MV,
    }),
    `traits of ${host}`,
    200,
  ).body.traits as string[];
  return traits.includes('COMPUTE_STATUS_DISABLED');
}
