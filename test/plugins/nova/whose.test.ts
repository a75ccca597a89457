// Whose move is it (whose.ts): the kind of move from Nova's migration records, who asked for it
// from the server's action log. A lost answer makes a call of drainer's kind by drainer's user, made
// no earlier than the lost one, drainer's; anything else is someone else's.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/observability/logger.ts';
import type { NovaInstanceAction, NovaMigration } from '../../../src/plugins/nova/types.ts';
import { whoseMove, type OwnCalls } from '../../../src/plugins/nova/whose.ts';

const T0 = Date.parse('2026-11-28T01:00:00Z');
const novaTime = (ms: number) => new Date(ms).toISOString().replace('Z', '000'); // Nova's: no zone

function nova(opts: { records?: NovaMigration[]; actions?: NovaInstanceAction[] | Error; user?: string }) {
  return {
    compute: {
      listMigrationsOf: async () => opts.records ?? [],
      listInstanceActions: async () => {
        if (opts.actions instanceof Error) throw opts.actions;
        return opts.actions ?? [];
      },
      userId: async () => opts.user ?? 'drainer',
    },
    signal: new AbortController().signal,
    log: createLogger({ level: 'silent' }),
  };
}

const act = (action: string, user: string, at: number, request_id = `req-${at}`): NovaInstanceAction => ({
  action,
  request_id,
  user_id: user,
  start_time: novaTime(at),
});
const record = (id: number, migration_type: string): NovaMigration => ({
  id,
  status: 'migrating',
  migration_type,
});
const lostAt = (at: number): OwnCalls => ({ requests: new Set(), lost: { action: 'cold-migrate', at } });

describe('whose move is it', () => {
  it("drainer's answered call: its request id is in the action log", async () => {
    const o = nova({ records: [record(3, 'migration')], actions: [act('migrate', 'drainer', T0, 'req-1')] });
    const own: OwnCalls = { requests: new Set(['req-1']), lost: undefined };
    expect(await whoseMove(o, 'vm', 'cold-migrate', own)).toBe('ours');
  });

  it('a call of the same kind by drainer’s user, no earlier than drainer’s lost one: drainer’s', async () => {
    const o = nova({ records: [record(3, 'migration')], actions: [act('migrate', 'drainer', T0 + 200)] });
    expect(await whoseMove(o, 'vm', 'cold-migrate', lostAt(T0))).toBe('ours');
  });

  it("the owner's resize is theirs, even after a lost call of drainer's", async () => {
    const o = nova({
      records: [record(2, 'migration'), record(3, 'resize')],
      actions: [act('resize', 'drainer', T0 + 200), act('migrate', 'drainer', T0 - 999_000)],
    });
    expect(await whoseMove(o, 'vm', 'cold-migrate', lostAt(T0))).toBe('theirs');
  });

  it("an operator's migrate under another user is theirs", async () => {
    const o = nova({ records: [record(3, 'migration')], actions: [act('migrate', 'operator', T0 + 200)] });
    expect(await whoseMove(o, 'vm', 'cold-migrate', lostAt(T0))).toBe('theirs');
  });

  it('a migrate asked for well before drainer’s lost call is not that call', async () => {
    const o = nova({
      records: [record(3, 'migration')],
      actions: [act('migrate', 'drainer', T0 - 5 * 60_000)],
    });
    expect(await whoseMove(o, 'vm', 'cold-migrate', lostAt(T0))).toBe('theirs');
  });

  it('with no call of drainer’s in doubt, an unknown request is someone else’s', async () => {
    const o = nova({ records: [record(3, 'migration')], actions: [act('migrate', 'drainer', T0 + 200)] });
    expect(await whoseMove(o, 'vm', 'cold-migrate', { requests: new Set(), lost: undefined })).toBe('theirs');
  });

  it('an action log that cannot be read leaves it to what drainer knows: its lost call', async () => {
    const o = nova({ actions: new Error('socket hang up') });
    expect(await whoseMove(o, 'vm', 'cold-migrate', lostAt(T0))).toBe('ours');
    expect(await whoseMove(o, 'vm', 'cold-migrate', { requests: new Set(), lost: undefined })).toBe('theirs');
  });
});
