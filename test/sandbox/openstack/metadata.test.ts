// The server metadata API as the real Nova answers it (each answer below was seen on Nova 2.93,
// the stack of ../shared/openstack; test/functional/metadata.test.ts compares the two live).
import { afterEach, describe, expect, it } from 'vitest';
import type { OpenStackSandbox } from '../../../src/sandbox/openstack/index.ts';
import { nova, start, token } from './client.ts';

let os: OpenStackSandbox;
afterEach(async () => {
  await os.close();
});

const boot = (metadata: Record<string, string> = { a: '1' }, extra: object = {}) =>
  start({ servers: [{ id: 's1', name: 's1', projectId: 'demo', host: 'compute-a', metadata, ...extra }] });

describe('sandbox Nova server metadata', () => {
  it('merges on POST, replaces on PUT, sets and deletes one item, and shows it in the server', async () => {
    os = await boot();
    const t = await token(os);
    const call = (method: string, path: string, body?: unknown) =>
      nova(os, method, `/servers/s1/metadata${path}`, { token: t, version: '2.93', body });

    const merged = await call('POST', '', { metadata: { 'drainer.dev:maintenance': 'cold', b: '2' } });
    const item = await call('PUT', '/b', { meta: { b: '3' } });
    const shown = await call('GET', '/drainer.dev:maintenance');
    const server = await nova(os, 'GET', '/servers/s1', { token: t, version: '2.1' });
    const replaced = await call('PUT', '', { metadata: { only: 'this' } });
    const deleted = await call('DELETE', '/only');
    const again = await call('DELETE', '/only');

    expect([merged.status, merged.body]).toEqual([
      200,
      { metadata: { a: '1', 'drainer.dev:maintenance': 'cold', b: '2' } },
    ]);
    expect([item.status, item.body]).toEqual([200, { meta: { b: '3' } }]);
    expect([shown.status, shown.body]).toEqual([200, { meta: { 'drainer.dev:maintenance': 'cold' } }]);
    expect(server.body.server.metadata).toEqual({ a: '1', 'drainer.dev:maintenance': 'cold', b: '3' });
    expect([replaced.status, replaced.body]).toEqual([200, { metadata: { only: 'this' } }]);
    expect(deleted.status).toBe(204);
    expect([again.status, again.body]).toEqual([
      404,
      { itemNotFound: { code: 404, message: 'Metadata item was not found' } },
    ]);
    expect((await call('GET', '')).body).toEqual({ metadata: {} });
  });

  it("refuses a key with a slash, as Nova's key pattern does (so drainer's key is drainer.dev:maintenance)", async () => {
    os = await boot();
    const t = await token(os);

    const res = await nova(os, 'POST', '/servers/s1/metadata', {
      token: t,
      body: { metadata: { 'drainer.dev/maintenance': 'cold' } },
    });

    expect(res.status).toBe(400);
    expect(res.body.badRequest.message).toBe(
      "Invalid input for field/attribute metadata. Value: {'drainer.dev/maintenance': 'cold'}. " +
        "'drainer.dev/maintenance' does not match any of the regexes: '^[a-zA-Z0-9-_:. ]{1,255}$'",
    );
  });

  it('answers bad bodies with the messages of Nova', async () => {
    os = await boot();
    const t = await token(os);
    const msg = async (method: string, path: string, body: unknown) =>
      (await nova(os, method, `/servers/s1/metadata${path}`, { token: t, body })).body.badRequest?.message;

    expect(await msg('PUT', '/b', { meta: { c: '3' } })).toBe('Request body and URI mismatch');
    expect(await msg('PUT', '/b', { meta: { b: '3', c: '4' } })).toBe(
      "Invalid input for field/attribute meta. Value: {'b': '3', 'c': '4'}. {'b': '3', 'c': '4'} has too many properties",
    );
    expect(await msg('PUT', '/a', { meta: {} })).toBe(
      'Invalid input for field/attribute meta. Value: {}. {} does not have enough properties',
    );
    expect(await msg('POST', '', { metadata: { k: 5 } })).toBe(
      "Invalid input for field/attribute k. Value: 5. 5 is not of type 'string'",
    );
    expect(await msg('POST', '', { metadata: { k: 'v' }, x: 1 })).toBe(
      "Additional properties are not allowed ('x' was unexpected)",
    );
    expect(await msg('POST', '', {})).toBe("'metadata' is a required property");
    expect(await msg('PUT', '', { meta: { a: 'b' } })).toBe("'metadata' is a required property");
  });

  it('says which server is missing, caps the items at 128 (403) and lets an empty value through', async () => {
    os = await boot();
    const t = await token(os);
    const missing = await nova(os, 'GET', '/servers/nope/metadata', { token: t });
    const many = Object.fromEntries(Array.from({ length: 128 }, (_, i) => [`k${i}`, 'v']));
    const over = await nova(os, 'POST', '/servers/s1/metadata', { token: t, body: { metadata: many } });
    const empty = await nova(os, 'POST', '/servers/s1/metadata', { token: t, body: { metadata: { v: '' } } });

    expect([missing.status, missing.body.itemNotFound.message]).toEqual([
      404,
      'Instance nope could not be found.',
    ]);
    expect([over.status, over.body]).toEqual([
      403,
      { forbidden: { code: 403, message: 'Maximum number of metadata items exceeds 128' } },
    ]);
    expect([empty.status, empty.body]).toEqual([200, { metadata: { a: '1', v: '' } }]);
  });

  it('refuses a change to a locked server for its owner but not for the admin', async () => {
    os = await boot({}, { locked: true });
    const set = async (who: 'admin' | 'demo') =>
      nova(os, 'POST', '/servers/s1/metadata', {
        token: await token(os, who),
        body: { metadata: { l: '1' } },
      });

    const refused = await set('demo');
    const allowed = await set('admin');

    expect([refused.status, refused.body.conflictingRequest.message]).toEqual([409, 'Instance s1 is locked']);
    expect(allowed.status).toBe(200);
  });

  it('refuses a change while the server migrates (409 naming its task_state)', async () => {
    os = await boot({ a: '1' }, { migrationMs: 600_000 });
    const t = await token(os);
    const live = await nova(os, 'POST', '/servers/s1/action', {
      token: t,
      version: '2.93',
      body: { 'os-migrateLive': { host: null, block_migration: 'auto' } },
    });

    const res = await nova(os, 'DELETE', '/servers/s1/metadata/a', { token: t });

    expect(live.status).toBe(202);
    expect([res.status, res.body.conflictingRequest.message]).toEqual([
      409,
      "Cannot 'delete metadata' instance s1 while it is in task_state migrating",
    ]);
  });
});
