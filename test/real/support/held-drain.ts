// A drain held by the gate while servers are still on the host, with something done to the agent in
// the middle of the evacuation (a rollout, a force delete): what the cases then judge.
import { expect } from 'vitest';
import type { ServerView } from '../../functional/support/nova.ts';
import type { Obj, Run } from './kubectl.ts';
import { Departures } from './nova.ts';
import type { Real } from './context.ts';

export interface HeldDrain {
  readonly servers: ServerView[];
  readonly oldAgent: Obj;
  readonly done: Run & { endedAt: number };
  /** The servers Nova still showed on the host when kubectl drain returned. */
  readonly leftAtReturn: ServerView[];
  /** When the last server was first seen off the host. */
  readonly lastLeftAt: number;
}

/** Boots `n` servers, starts `kubectl drain`, runs `act` once the record says Evacuating, and waits for the drain. */
export async function heldDrainWhile(
  r: Real,
  label: string,
  n: number,
  act: (now: { oldAgent: Obj; servers: ServerView[] }) => Promise<void>,
): Promise<HeldDrain> {
  await r.cluster.waitGateHeld();
  const servers = await r.nova.boot(label, n);
  const oldAgent = (await r.cluster.readyAgent())!;
  const drain = r.cluster.drain();
  const departures = new Departures(r.nova, servers);
  await r.cluster.waitPhase('Evacuating', 120_000);
  await act({ oldAgent, servers });
  const done = await drain.done;
  const leftAtReturn = await r.nova.stillOnHost(servers);
  await departures.end();
  return { servers, oldAgent, done, leftAtReturn, lastLeftAt: departures.lastLeftAt! };
}

/** The promise: kubectl drain succeeded, and only after the last server had left the host. */
export function expectDrainWaitedForTheServers(held: HeldDrain): void {
  expect(held.done.code, held.done.stderr).toBe(0);
  expect(
    held.leftAtReturn.map((s) => s.name),
    'servers still on the host when kubectl drain returned',
  ).toEqual([]);
  expect(held.done.endedAt).toBeGreaterThanOrEqual(held.lastLeftAt);
}
