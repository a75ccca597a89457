// The arranged world of one test file: an admin session on the cloud the environment names, the
// image/flavor to boot, a second project, and cleanup that always runs (after each test and at the end).
import { afterAll, afterEach, beforeAll } from 'vitest';
import { Cleanup } from './cleanup.ts';
import { cloudFromEnv, suiteSettings, type CloudEnv, type SuiteSettings } from './cloud-env.ts';
import { createProject, grantRole, roleId } from './identity.ts';
import {
  bootServer,
  computeService,
  deleteServer,
  findFlavorId,
  findImageId,
  serverAction,
  serversOnHost,
  setService,
  waitServer,
  type ServerView,
} from './nova.ts';
import { uniqueName } from './run-id.ts';
import { untilPlacementAgrees } from './placeable.ts';
import { hostView } from './placement-traits.ts';
import { Session } from './session.ts';

export type BootState = 'ACTIVE' | 'SHUTOFF' | 'PAUSED';

export interface BootSpec {
  label: string;
  state?: BootState;
  /** Boot in this session's project (default: the admin's project). */
  as?: Session;
  host?: string;
  /** Image id (default: the suite's image). */
  image?: string;
}

export interface World {
  cloud: CloudEnv;
  settings: SuiteSettings;
  admin: Session;
  imageId: string;
  flavorId: string;
  /** Undone after the current test. */
  cleanup: Cleanup;
  /** Undone after the file. */
  suiteCleanup: Cleanup;
  boot(specs: readonly BootSpec[]): Promise<ServerView[]>;
  /** A second project where the admin user may boot (admin role there), as a session scoped to it. */
  secondProject(): Promise<Session>;
}

const ACTIONS: Record<Exclude<BootState, 'ACTIVE'>, Record<string, null>> = {
  SHUTOFF: { 'os-stop': null },
  PAUSED: { pause: null },
};

/** Placement may lag behind Nova for a host just enabled or just started (support/placeable.ts). */
async function untilPlaceable(w: World, hosts: Iterable<string>): Promise<void> {
  for (const host of new Set(hosts)) await untilPlacementAgrees(host, () => hostView(w.admin, host));
}

async function bootAll(w: World, specs: readonly BootSpec[]): Promise<ServerView[]> {
  await untilPlaceable(
    w,
    specs.map((spec) => spec.host ?? w.settings.sourceHost),
  );
  const ids = await Promise.all(
    specs.map(async (spec) => {
      const host = spec.host ?? w.settings.sourceHost;
      const name = uniqueName(spec.label);
      const id = await bootServer(spec.as ?? w.admin, {
        name,
        host,
        imageId: spec.image ?? w.imageId,
        flavorId: w.flavorId,
      });
      w.cleanup.add(`server ${name}`, () => deleteServer(w.admin, id));
      return id;
    }),
  );
  return Promise.all(
    ids.map(async (id, i) => {
      const spec = specs[i]!;
      const active = await waitServer(w.admin, id, 'ACTIVE');
      if (!spec.state || spec.state === 'ACTIVE') return active;
      await serverAction(w.admin, id, ACTIONS[spec.state]);
      return waitServer(w.admin, id, spec.state);
    }),
  );
}

/** Both compute services must start enabled and up; after each test they are enabled again. */
async function checkHosts(w: World): Promise<void> {
  for (const host of [w.settings.sourceHost, w.settings.targetHost]) {
    const svc = await computeService(w.admin, host);
    if (svc.state !== 'up') throw new Error(`nova-compute on ${host} is ${svc.state}; the suite needs it up`);
    if (svc.status !== 'enabled' && !svc.disabledReason?.startsWith('drainer')) {
      throw new Error(
        `nova-compute on ${host} is disabled (${svc.disabledReason}); the suite needs it enabled`,
      );
    }
    if (svc.status !== 'enabled') await setService(w.admin, host, true); // a previous run's leftover
  }
}

async function reenableHosts(w: World): Promise<void> {
  for (const host of [w.settings.sourceHost, w.settings.targetHost]) {
    if ((await computeService(w.admin, host)).status !== 'enabled') {
      await setService(w.admin, host, true);
      await untilPlaceable(w, [host]);
    }
  }
}

/** Registers the hooks and returns a getter for the world (valid inside tests). */
export function useWorld(): () => World {
  let world: World | undefined;
  beforeAll(async () => {
    const cloud = cloudFromEnv();
    const settings = suiteSettings();
    const admin = await Session.open(cloud);
    const w: World = {
      cloud,
      settings,
      admin,
      imageId: await findImageId(admin, settings.image),
      flavorId: await findFlavorId(admin, settings.flavor),
      cleanup: new Cleanup(),
      suiteCleanup: new Cleanup(),
      boot: (specs) => bootAll(w, specs),
      secondProject: async () => {
        const id = await createProject(admin, w.suiteCleanup, uniqueName('project'));
        await grantRole(admin, id, admin.userId, await roleId(admin, 'admin'));
        return Session.open(cloud, id);
      },
    };
    await checkHosts(w);
    const foreign = await serversOnHost(admin, settings.sourceHost);
    if (foreign.length > 0) {
      console.warn(
        `${settings.sourceHost} already hosts ${foreign.length} server(s) the suite did not create`,
      );
    }
    world = w;
  });
  afterEach(async () => {
    if (!world) return;
    try {
      await world.cleanup.run();
    } finally {
      await reenableHosts(world);
    }
  });
  afterAll(async () => {
    if (world) await world.suiteCleanup.run();
  });
  return () => {
    if (!world) throw new Error('the functional world is not set up (beforeAll failed?)');
    return world;
  };
}
