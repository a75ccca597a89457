// Microversion negotiation against the real Nova: the server's maximum by default, and a working
// evacuation when the config caps it at 2.25 (block_migration "auto") or 2.1 (legacy service endpoints).
import { describe, expect, it } from 'vitest';
import { computeService, getServer } from './support/nova.ts';
import { evacuate, novaPlugin, restore } from './support/nova-plugin.ts';
import { http } from './support/session.ts';
import { useWorld } from './support/world.ts';

const world = useWorld();

/** The compute API's maximum microversion, from its unauthenticated version document. */
async function serverMaxMicroversion(computeUrl: string): Promise<string> {
  const res = await http.get(computeUrl.replace(/\/+$/, '') + '/');
  return (JSON.parse(res.body) as { version: { version: string } }).version.version;
}

describe('microversions against a real Nova', () => {
  it.each([
    { cap: undefined, label: 'uncapped' },
    { cap: '2.25', label: 'capped at 2.25' },
    { cap: '2.1', label: 'capped at 2.1' },
  ])('evacuates and restores with the negotiated microversion ($label)', async ({ cap }) => {
    const w = world();
    const { sourceHost: source, targetHost: target } = w.settings;
    const expected = cap ?? (await serverMaxMicroversion(w.admin.endpoint('compute')));
    const [server] = await w.boot([{ label: `mv-${cap ?? 'max'}` }]);
    const plugin = await novaPlugin(w.cloud, cap ? { maxMicroversion: cap } : {});

    const { outcome, record } = await evacuate(plugin, source);

    expect(outcome.succeeded, JSON.stringify(outcome)).toBe(true);
    expect(record?.microversion).toBe(expected);
    expect((await getServer(w.admin, server!.id))?.host).toBe(target);
    const disabled = await computeService(w.admin, source);
    expect([disabled.status, disabled.disabledReason?.startsWith('drainer:')]).toEqual(['disabled', true]);

    await restore(plugin, source, record);

    expect((await computeService(w.admin, source)).status).toBe('enabled');
  });
});
