// GET /flavors/{id} (what a client before 2.47 reads a server's size from) and
// GET /os-server-groups (policy from 2.64, policies before). Both read-only.
import type { Reply } from '../http.ts';
import { atLeast } from '../microversion.ts';
import type { NovaContext } from './context.ts';
import { notFound } from './context.ts';
import type { Server } from './model.ts';

/** Every server's flavor is its own size; the id encodes it so GET /flavors/{id} can answer. */
export const flavorId = (s: Pick<Server, 'vcpus' | 'ramMb' | 'diskGb'>): string =>
  `flavor-c${s.vcpus}-r${s.ramMb}-d${s.diskGb}`;

export function showFlavor(ctx: NovaContext, id: string): Reply {
  const m = /^flavor-c(\d+)-r(\d+)-d(\d+)$/.exec(id);
  if (!m) throw notFound(`Flavor ${id} could not be found.`);
  const [vcpus, ram, disk] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return {
    status: 200,
    body: {
      flavor: {
        id,
        name: `m1.c${vcpus}r${ram}`,
        ram,
        disk,
        swap: '',
        'OS-FLV-EXT-DATA:ephemeral': 0,
        'OS-FLV-DISABLED:disabled': false,
        vcpus,
        'os-flavor-access:is_public': true,
        rxtx_factor: 1.0,
        links: [{ rel: 'self', href: `${ctx.computeUrl}/flavors/${id}` }],
      },
    },
  };
}

export function listServerGroups(ctx: NovaContext): Reply {
  const all = ctx.admin && ['true', '1', 'yes'].includes((ctx.query.get('all_projects') ?? '').toLowerCase());
  const groups = ctx.model.serverGroups.filter((g) => all || g.projectId === ctx.token.project.id);
  return {
    status: 200,
    body: {
      server_groups: groups.map((g) => ({
        id: g.id,
        name: g.name,
        ...(atLeast(ctx.version, 64)
          ? { policy: g.policy, rules: {} }
          : { policies: [g.policy], metadata: {} }),
        members: [...g.members],
        ...(atLeast(ctx.version, 13) ? { project_id: g.projectId, user_id: g.userId } : {}),
      })),
    },
  };
}
