// Story: the soak deletes a Node and its kubelet registers it again, as a replaced machine does. A
// real kubelet registers the Node with its own labels only (the well-known ones and its
// --node-labels, such as the soak's drainer.dev/reboot=true) and its --register-with-taints, never
// with what drainer (its queue label, its record, its taint) or an operator (an agent taken off by
// label, a cordon, Karpenter's taint) wrote on the Node that was deleted.
import { afterEach, describe, expect, it } from 'vitest';
import { agentBack } from '../../bench/chaos/agent-off.ts';
import { AGENT_LABEL, type Fleet } from '../../bench/chaos/fleet.ts';
import { kubeletRegistration, Operator } from '../../bench/chaos/operator.ts';
import { EVACUATING_TAINT, QUEUED_LABEL, REBOOT_KEY, STATE_ANNOTATION } from '../../src/names.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';

interface NodeJson {
  metadata: { uid: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { unschedulable?: boolean; taints?: { key: string; effect: string }[] };
}

describe('a Node deleted and registered again by its kubelet', () => {
  let sb: Sandbox | undefined;
  afterEach(async () => sb?.close());

  it('carries the kubelet’s labels and taints only, none of drainer’s or the operator’s', async () => {
    const dedicated = { key: 'dedicated', value: 'vms', effect: 'NoSchedule' };
    sb = await startSandbox({
      scale: 20,
      scenario: {
        name: 'recreate',
        nodes: [{ name: 'hv-2', labels: { [REBOOT_KEY]: 'true' }, taints: [dedicated] }],
      },
    });
    const url = `${sb.kube.url}/api/v1/nodes/hv-2`;
    const node = async () => (await (await fetch(url)).json()) as NodeJson;
    const registered = await node();
    const patch = await fetch(url, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({
        metadata: {
          labels: { [QUEUED_LABEL]: '1764330000000', [AGENT_LABEL]: 'disabled' },
          annotations: { [STATE_ANNOTATION]: '{"phase":"Queued"}' },
        },
        spec: {
          unschedulable: true,
          taints: [dedicated, EVACUATING_TAINT, { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }],
        },
      }),
    });
    expect(patch.status).toBe(200);

    const op = new Operator(sb.kube.url, 'drainer', kubeletRegistration(sb.scenario));
    expect((await op.recreateNode('hv-2')).status).toBe(201);

    const again = await node();
    expect(again.metadata.uid).not.toBe(registered.metadata.uid);
    expect(again.metadata.labels).toEqual(registered.metadata.labels);
    expect(again.metadata.labels?.[REBOOT_KEY]).toBe('true');
    expect(Object.keys(again.metadata.annotations ?? {}).filter((k) => k.startsWith('drainer.dev/'))).toEqual(
      [],
    );
    expect(again.spec.unschedulable).toBeUndefined();
    expect(again.spec.taints).toEqual([dedicated]);
  });

  it('runs an agent again where the operator had taken it off: the label went with the old Node', async () => {
    const started: string[] = [];
    const fleet = {
      disabled: new Set(['hv-2']),
      offWithVms: new Set(['hv-2']),
      gateDeletedOff: new Set(['hv-2']),
      backFromOff: new Map(),
      agents: new Map(),
      sandbox: { clock: { now: () => 5000 } },
      startAgent: async (node: string) => void started.push(node),
    } as unknown as Fleet;

    await agentBack(fleet, 'hv-2');
    await agentBack(fleet, 'hv-3'); // its agent was never taken off: it runs already

    expect(started).toEqual(['hv-2']);
    expect([...fleet.disabled, ...fleet.offWithVms, ...fleet.gateDeletedOff]).toEqual([]);
    // its gate had been deleted: the node has none until the new agent's holds (check.ts withAgentBack)
    expect([...fleet.backFromOff]).toEqual([['hv-2', 5000]]);
  });
});
