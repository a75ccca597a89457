// The sandbox's Nova emulation must answer like the real one: the same requests, run against both,
// must get the same status codes and the same field names and JSON types (values may differ).
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { startOpenStack } from '../../src/sandbox/openstack/index.ts';
import { ScaledClock } from '../../src/sandbox/clock.ts';
import type { CloudEnv } from './support/cloud-env.ts';
import { runContract, type ContractSide, type Observation } from './support/contract.ts';
import { sandboxCloud } from './support/sandbox-cloud.ts';
import { createUser, grantRole, roleId } from './support/identity.ts';
import { uniqueName } from './support/run-id.ts';
import { shapeDiff } from './support/shape.ts';
import { useWorld } from './support/world.ts';

const world = useWorld();

async function realSide(): Promise<ContractSide> {
  const w = world();
  const [live, legacy, abort, fail, shutoff] = await w.boot([
    { label: 'ct-live' },
    { label: 'ct-legacy' },
    { label: 'ct-abort' },
    { label: 'ct-fail' },
    { label: 'ct-shutoff', state: 'SHUTOFF' },
  ]);
  const group = await w.admin.request('compute', 'POST', '/os-server-groups', {
    microversion: '2.64',
    json: { server_group: { name: uniqueName('ct-group'), policy: 'anti-affinity' } },
  });
  const serverGroup = String(group.body.server_group?.id);
  w.cleanup.add(`server group ${serverGroup}`, () =>
    w.admin.request('compute', 'DELETE', `/os-server-groups/${serverGroup}`, { microversion: '2.64' }),
  );
  const user = await createUser(w.admin, w.cleanup, uniqueName('ct-member'), w.admin.projectId);
  await grantRole(w.admin, w.admin.projectId, user.id, await roleId(w.admin, 'member', '_member_'));
  const member: CloudEnv = {
    ...w.cloud,
    auth: {
      authUrl: w.cloud.auth.authUrl,
      username: user.name,
      password: user.password,
      userDomainId: w.admin.projectDomainId,
      projectId: w.admin.projectId,
    },
  };
  return {
    label: 'real',
    admin: w.cloud,
    member,
    sourceHost: w.settings.sourceHost,
    targetHost: w.settings.targetHost,
    serverGroup,
    servers: { live: live!.id, legacy: legacy!.id, abort: abort!.id, fail: fail!.id, shutoff: shutoff!.id },
  };
}

async function emulatedSide(real: ContractSide): Promise<{ side: ContractSide; close: () => Promise<void> }> {
  const src = real.sourceHost;
  const ids = {
    live: 'ct-live',
    legacy: 'ct-legacy',
    abort: 'ct-abort',
    fail: 'ct-fail',
    shutoff: 'ct-shutoff',
  };
  const os = await startOpenStack({
    clock: new ScaledClock(1),
    host: '127.0.0.1',
    port: 0,
    hosts: [{ name: src }, { name: real.targetHost }],
    servers: [
      { name: 'ct-live', projectId: 'admin', host: src, migrationMs: 1500 },
      { name: 'ct-legacy', projectId: 'admin', host: src, migrationMs: 1500 },
      { name: 'ct-abort', projectId: 'admin', host: src, migrationMs: 120_000 },
      { name: 'ct-fail', projectId: 'admin', host: src, migrationMs: 1500 },
      { name: 'ct-shutoff', projectId: 'demo', host: src, status: 'SHUTOFF' },
    ],
    serverGroups: [{ name: 'ct-group', policy: 'anti-affinity', members: [], projectId: 'admin' }],
  });
  const byName = Object.fromEntries(os.state.servers().map((s) => [s.name, s.id]));
  const servers = Object.fromEntries(
    Object.entries(ids).map(([k, name]) => [k, byName[name]!]),
  ) as ContractSide['servers'];
  return {
    side: {
      ...real,
      label: 'emulation',
      admin: sandboxCloud(os),
      member: sandboxCloud(os, 'demo'),
      servers,
      serverGroup: os.state.serverGroups()[0]?.id,
    },
    close: () => os.close(),
  };
}

function compare(real: Observation[], emulated: Observation[]): string[] {
  const diffs: string[] = [];
  for (const r of real) {
    const e = emulated.find((x) => x.call === r.call);
    if (!e) {
      diffs.push(`${r.call}: not observed on the emulation`);
      continue;
    }
    if (r.status !== e.status) diffs.push(`${r.call}: status ${r.status} (real) vs ${e.status} (emulation)`);
    else diffs.push(...shapeDiff(r.shape, e.shape).map((d) => `${r.call}: ${d}`));
    if (JSON.stringify(r.facts) !== JSON.stringify(e.facts)) {
      diffs.push(`${r.call}: ${JSON.stringify(r.facts)} (real) vs ${JSON.stringify(e.facts)} (emulation)`);
    }
  }
  return diffs;
}

describe('contract: the sandbox Nova emulation answers like the real Nova', () => {
  it('gives the same status codes and field names for every call drainer makes', async () => {
    const realSideSpec = await realSide();
    const real = await runContract(realSideSpec);
    const emulation = await emulatedSide(realSideSpec);
    world().cleanup.add('sandbox openstack', emulation.close);

    const emulated = await runContract(emulation.side);
    if (process.env.DRAINER_FT_CONTRACT_DUMP) {
      await writeFile(process.env.DRAINER_FT_CONTRACT_DUMP, JSON.stringify({ real, emulated }, null, 1));
    }

    expect(compare(real, emulated)).toEqual([]);
  });
});
