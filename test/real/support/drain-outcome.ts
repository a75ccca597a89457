// The promise both gate stories check (gate pod deleted, drain --disable-eviction): kubectl drain
// succeeds and returns only after the last server left the host; the figures say how long it took.
import { expect, type TestContext } from 'vitest';
import { figure, seconds, type Real } from './context.ts';
import type { Background } from './kubectl.ts';
import type { ServerView } from '../../functional/support/nova.ts';
import type { Departures } from './nova.ts';

export async function expectDrainOutlastedServers(
  ctx: TestContext,
  r: Real,
  drain: Background,
  servers: readonly ServerView[],
  departures: Departures,
): Promise<void> {
  const done = await drain.done;
  const leftAtReturn = await r.nova.stillOnHost(servers);
  await departures.end();
  figure(ctx, 'servers on the host when the drain returned', `${leftAtReturn.length} of ${servers.length}`);
  figure(ctx, 'drain took', `${seconds(done.endedAt - drain.startedAt)} s`);

  expect(done.code, done.stderr).toBe(0);
  expect(
    leftAtReturn.map((s) => s.name),
    'servers still on the host when kubectl drain returned',
  ).toEqual([]);
}
