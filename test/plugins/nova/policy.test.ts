// Each server's way out (metadata drainer.dev:maintenance), with the node's reboot declaration and
// nova.onError: what evacuate does with it and what the plan says.
import { describe, expect, it } from 'vitest';
import { classify, planWorkload } from '../../../src/plugins/nova/classify.ts';
import { chosenWay, invalidPolicies, MAINTENANCE_KEY } from '../../../src/plugins/nova/policy.ts';
import type { NovaServer } from '../../../src/plugins/nova/types.ts';

const server = (status: string, way?: string): NovaServer => ({
  id: 'id-1',
  name: 'vm',
  status,
  tenant_id: 'p1',
  'OS-EXT-STS:task_state': null,
  'OS-EXT-SRV-ATTR:host': 'h',
  ...(way === undefined ? {} : { metadata: { [MAINTENANCE_KEY]: way, other: 'x' } }),
});
const opts = { coldMigrateStopped: true, notifyTimeout: 60 };

describe('the way out a server names', () => {
  it('is live by default, the owner’s value when known, and a line naming the value otherwise', () => {
    expect(chosenWay(server('ACTIVE'))).toEqual({ way: 'live', why: 'default' });
    expect(chosenWay(server('ACTIVE', 'cold'))).toEqual({
      way: 'cold',
      why: `metadata ${MAINTENANCE_KEY}=cold`,
    });
    expect(invalidPolicies([server('ACTIVE', 'COLD'), server('ACTIVE', 'stop')])).toEqual([
      `vm (id-1): metadata ${MAINTENANCE_KEY}="COLD" is not one of live, cold, stop, notify`,
    ]);
  });

  it.each([
    ['cold', 'ACTIVE', false, { kind: 'move', action: 'cold-migrate' }],
    ['cold', 'SHUTOFF', false, { kind: 'move', action: 'cold-migrate' }],
    [
      'cold',
      'PAUSED',
      false,
      { kind: 'blocked', reason: 'way out "cold" needs the server ACTIVE or SHUTOFF, not PAUSED' },
    ],
    ['stop', 'ACTIVE', true, { kind: 'move', action: 'stop' }],
    [
      'stop',
      'SHUTOFF',
      true,
      { kind: 'stays', reason: 'SHUTOFF: stays on the host for the declared reboot' },
    ],
    ['live', 'ACTIVE', false, { kind: 'move', action: 'live-migrate' }],
  ])('%s on a %s server (reboot %s) → %o', (way, status, reboot, verdict) => {
    expect(classify(server(status, way), { ...opts, reboot })).toEqual(verdict);
  });

  it('stop without a declared reboot blocks: a stopped server is still on the host', () => {
    expect(classify(server('ACTIVE', 'stop'), opts)).toEqual({
      kind: 'blocked',
      reason: expect.stringMatching(
        /declared a reboot \(node annotation or label drainer\.dev\/reboot=true\)/,
      ),
    });
  });

  it('a `stop` server busy when planned (its owner starting or stopping it) is planned as a stop, and refused without a reboot', () => {
    const busy = { ...server('SHUTOFF', 'stop'), 'OS-EXT-STS:task_state': 'powering-on' };
    expect(planWorkload(busy, { ...opts, reboot: true })).toMatchObject({ action: 'stop' });
    expect(planWorkload(busy, opts)).toMatchObject({
      action: 'none',
      blocker: expect.stringMatching(/declared a reboot/),
    });
  });

  it('coldMigrateStopped false does not override an owner who asked for cold', () => {
    expect(classify(server('SHUTOFF', 'cold'), { ...opts, coldMigrateStopped: false })).toEqual({
      kind: 'move',
      action: 'cold-migrate',
    });
  });

  it('an invalid value blocks the server (and the plugin refuses the plan)', () => {
    expect(planWorkload(server('ACTIVE', 'teleport'), opts)).toMatchObject({
      action: 'none',
      blocker: `metadata ${MAINTENANCE_KEY}="teleport" is not one of live, cold, stop, notify`,
    });
  });

  it('notify plans the owner first and says what follows the timeout', () => {
    expect(planWorkload(server('SHUTOFF', 'notify'), opts)).toMatchObject({
      action: 'notify',
      why: `metadata ${MAINTENANCE_KEY}=notify: its owner is asked to move it; after nova.notifyTimeout (60s) it takes the default way (cold-migrate)`,
    });
  });
});

describe('a server in ERROR under nova.onError', () => {
  it('block refuses, last tries it after the others, skip leaves it', () => {
    expect(classify(server('ERROR'), opts)).toEqual({ kind: 'blocked', reason: 'server is in ERROR' });
    expect(classify(server('ERROR'), { ...opts, onError: 'last' })).toEqual({
      kind: 'move',
      action: 'cold-migrate',
      last: true,
    });
    expect(planWorkload(server('ERROR'), { ...opts, onError: 'skip' })).toMatchObject({
      action: 'skip',
      why: 'in ERROR: left on the host (nova.onError skip)',
    });
  });

  it('wins over the owner’s way: an ERROR server cannot take it', () => {
    expect(classify(server('ERROR', 'cold'), { ...opts, onError: 'skip' }).kind).toBe('stays');
  });
});
