// No gate without a keeper (issue 48): node-1's agent taken off the documented way
// (drainer.dev/agent=disabled, which drainer's DaemonSet affinity excludes) left its gate up, and
// `kubectl drain node-1` waited on it with no VMs on the node, while doctor said every promise held.
import { describe, expect, it } from 'vitest';
import { selectsNode } from '../../src/invariants/daemonset.ts';
import { gatesHold } from '../../src/invariants/rules/gate-held.ts';
import { gatesWithoutKeeper } from '../../src/invariants/rules/gate-keeper.ts';
import type { World, WorldDaemonSet } from '../../src/invariants/world.ts';
import { holdingGate, liveAgent, node, OPTS, rec, world } from './world.ts';

const DS: WorldDaemonSet = {
  name: 'drainer',
  nodeSelector: { 'openstack-compute-node': 'enabled' },
  nodeSelectorTerms: [
    { matchExpressions: [{ key: 'drainer.dev/agent', operator: 'NotIn', values: ['disabled'] }] },
  ],
};
const compute = { 'openstack-compute-node': 'enabled' };
const disabled = node('node-1', undefined, { labels: { ...compute, 'drainer.dev/agent': 'disabled' } });
const nova = (status: string) => ({
  services: [{ host: 'node-1', status: 'enabled', disabledReason: null }],
  servers: [{ id: 's1', name: 'web-1', host: 'node-1', status }],
  migrations: [],
});

const ids = (w: Partial<World>) =>
  gatesWithoutKeeper(world({ ...holdingGate('node-1'), leases: [], daemonSets: [DS], ...w }), OPTS).map(
    (v) => v.id,
  );

describe('a gate no agent will ever open', () => {
  it.each([
    ['agent taken off by label, nothing on the node', { nodes: [disabled] }, ['gate-without-keeper']],
    [
      // a drain that returned with it there broke its promise (drain-returned-occupied), so drainer
      // keeps the gate for it: the operator must bring an agent back to start it, or move it
      'the same, a stopped server on it',
      { nodes: [disabled], nova: nova('SHUTOFF') },
      ['vms-without-agent'],
    ],
    ['the same, a server in ERROR on it', { nodes: [disabled], nova: nova('ERROR') }, ['vms-without-agent']],
    [
      'the same, only a deleted server left in the list',
      { nodes: [disabled], nova: nova('SOFT_DELETED') },
      ['gate-without-keeper'],
    ],
    [
      'agent taken off by label, a server running there',
      { nodes: [disabled], nova: nova('ACTIVE') },
      ['vms-without-agent'],
    ],
    [
      'the DaemonSet is being deleted',
      { nodes: [node('node-1', undefined, { labels: compute })], daemonSets: [{ ...DS, deleting: true }] },
      ['gate-without-keeper'],
    ],
    [
      'no DaemonSet in the namespace at all (agents run some other way)',
      { nodes: [disabled], daemonSets: [] },
      [],
    ],
    [
      'a successor is expected (the DaemonSet still selects the node)',
      { nodes: [node('node-1', undefined, { labels: compute })] },
      [],
    ],
    [
      'its agent runs (it drops the gate itself as it stops)',
      { nodes: [disabled], leases: [liveAgent('node-1')] },
      [],
    ],
    ['the DaemonSets were not read', { nodes: [disabled], daemonSets: undefined }, []],
  ] as [string, Partial<World>, string[]][])('%s → %j', (_what, w, expected) => {
    expect(ids(w)).toEqual(expected);
  });

  it('tells how to open it', () => {
    const [v] = gatesWithoutKeeper(
      world({ ...holdingGate('node-1'), leases: [], daemonSets: [DS], nodes: [disabled] }),
      OPTS,
    );
    expect(v?.evidence).toContain('the node is labelled drainer.dev/agent=disabled');
    expect(v?.fix).toContain('drainer release --node node-1');
  });
});

describe('which nodes a DaemonSet places a pod on', () => {
  it.each([
    [{}, undefined, true],
    [{ a: '1' }, { nodeSelector: { a: '1' } }, true],
    [{ a: '2' }, { nodeSelector: { a: '1' } }, false],
    [
      { x: 'disabled' },
      { nodeSelectorTerms: [{ matchExpressions: [{ key: 'x', operator: 'NotIn', values: ['disabled'] }] }] },
      false,
    ],
    [
      {},
      {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'x', operator: 'Exists' }] },
          { matchExpressions: [] },
        ],
      },
      true,
    ],
    [
      { n: '5' },
      { nodeSelectorTerms: [{ matchExpressions: [{ key: 'n', operator: 'Gt', values: ['4'] }] }] },
      true,
    ],
    [{}, { nodeSelectorTerms: [] }, false],
  ] as [Record<string, string>, Partial<WorldDaemonSet> | undefined, boolean][])(
    'labels %j, %j → %s',
    (labels, ds, expected) => {
      expect(selectsNode({ name: 'd', ...ds }, { labels })).toBe(expected);
    },
  );

  it('a DaemonSet being deleted places nothing', () => {
    expect(selectsNode({ name: 'd', deleting: true }, { labels: {} })).toBe(false);
  });
});

describe('a gate the agent dropped as it stopped for good', () => {
  // chaos seed 13 at ac23661: blade-1's agent taken off mid-evacuation marked its record Failed and,
  // nothing being left on the host, removed its gate (keeper.ts), as gate-without-keeper asks; then
  // gate-missing said the Failed record wanted it held. Two rules asking opposite things of one node
  const failed = node('node-1', rec('Failed', { plugins: {} }), {
    labels: { ...compute, 'drainer.dev/agent': 'disabled' },
  });
  const both = (w: Partial<World>) => {
    const all = world({ leases: [], daemonSets: [DS], nodes: [failed], ...w });
    return [...gatesHold(all, OPTS), ...gatesWithoutKeeper(all, OPTS)].map((v) => v.id);
  };

  it.each([
    ['nothing left on the node: the drop was right', {}, []],
    ['a server still there: a drain would not wait for it', { nova: nova('ACTIVE') }, ['gate-missing']],
    ['its agent still runs (it keeps the gate)', { leases: [liveAgent('node-1')] }, ['gate-missing']],
    [
      'a successor is expected (the DaemonSet still selects the node)',
      { nodes: [node('node-1', rec('Failed', { plugins: {} }), { labels: compute })] },
      ['gate-missing'],
    ],
  ] as [string, Partial<World>, string[]][])('%s → %j', (_what, w, expected) => {
    expect(both(w)).toEqual(expected);
  });
});
