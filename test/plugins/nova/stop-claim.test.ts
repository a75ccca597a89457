// Whose is a SHUTOFF server drainer marked: with no request id of drainer's stop (its answer came
// after the Node and its record were gone), the mark's `after` anchors the log: drainer's stop is
// then the one power action since. And the mark's text: what it names, within Nova's 255 characters.
import { describe, expect, it } from 'vitest';
import { ForbiddenError } from '../../../src/errors.ts';
import { formatStopMark, STOP_MARK_KEY, stopMarkOf } from '../../../src/plugins/nova/stop-mark.ts';
import { stopStillOurs } from '../../../src/plugins/nova/stop-owner.ts';
import type { NovaInstanceAction } from '../../../src/plugins/nova/types.ts';

const act = (action: string, request_id: string): NovaInstanceAction => ({ action, request_id });
const log = (...actions: NovaInstanceAction[]) => ({ listInstanceActions: async () => actions });

describe('the claim by the mark’s anchor (newest first)', () => {
  it.each([
    ['drainer’s stop, the one power action after the anchor', [act('stop', 'r3'), act('create', 'r1')], true],
    ['a move since is no power action', [act('migrate', 'r4'), act('stop', 'r3'), act('create', 'r1')], true],
    [
      'its owner started and stopped it since',
      [act('stop', 'r5'), act('start', 'r4'), act('stop', 'r3'), act('create', 'r1')],
      false,
    ],
    ['its owner started it since', [act('start', 'r4'), act('stop', 'r3'), act('create', 'r1')], false],
    ['the stop never ran (the guest powered itself off)', [act('create', 'r1')], false],
  ])('%s', async (_what, actions, ours) => {
    expect(await stopStillOurs(log(...actions), 's', new Set(), 'r1')).toBe(ours);
  });

  it('says nothing when the anchor is gone from the log, or the log may not be read', async () => {
    expect(await stopStillOurs(log(act('stop', 'r3')), 's', new Set(), 'r1')).toBeUndefined();
    const forbidden = {
      listInstanceActions: async () => {
        throw new ForbiddenError('policy', { api: 'nova', status: 403 });
      },
    };
    expect(await stopStillOurs(forbidden, 's', new Set(), 'r1')).toBeUndefined();
  });

  it('a request id of drainer’s wins over the anchor', async () => {
    const l = log(act('stop', 'r5'), act('start', 'r4'), act('stop', 'r3'), act('create', 'r1'));
    expect(await stopStillOurs(l, 's', new Set(['r5']), 'r1')).toBe(true);
  });
});

describe('the mark’s text', () => {
  it('reads back what it was written with', () => {
    const mark = { node: 'node-7', trigger: 'NodeMaintenance/kernel', after: '', request: 'req-2' };
    const text = formatStopMark(mark);
    expect(text).toBe('node=node-7 trigger=NodeMaintenance/kernel after=- request=req-2');
    expect(stopMarkOf({ metadata: { [STOP_MARK_KEY]: text } })).toEqual(mark);
  });

  it('stays within Nova’s 255 characters and keeps both request ids whole for a very long node name', () => {
    const after = `req-${'a'.repeat(36)}`;
    const request = `req-${'b'.repeat(36)}`;
    const text = formatStopMark({
      node: 'n'.repeat(253),
      trigger: `NodeMaintenance/${'m'.repeat(200)}`,
      after,
      request,
    });
    expect(text.length).toBeLessThanOrEqual(255);
    expect(stopMarkOf({ metadata: { [STOP_MARK_KEY]: text } })).toMatchObject({ after, request });
  });
});
