// A node name longer than a label value (63 characters) is a Node name the API server takes, but
// not a kubernetes.io/hostname label: the sandbox's Node goes without one, so a cordon of it (a
// write of the whole Node) is not refused 422 for a label nobody wrote (the chaos soak's fleet has
// two such names; every kubectl cordon of them failed once the API server checked labels).
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';

const LONG = `hv-rack-07-${'row-b-'.repeat(9)}chassis-blade-1`;

describe('a Node whose name is longer than a label value', () => {
  let sb: Sandbox | undefined;
  afterEach(async () => sb?.close());

  it('is cordoned like any other', async () => {
    sb = await startSandbox({
      scale: 20,
      scenario: { name: 'long', nodes: [{ name: LONG }, { name: 'hv-2' }] },
    });
    const res = await fetch(`${sb.kube.url}/api/v1/nodes/${LONG}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { unschedulable: true } }),
    });
    expect(res.status).toBe(200);
    const node = (await res.json()) as { metadata: { labels: Record<string, string> } };
    expect(node.metadata.labels['kubernetes.io/hostname']).toBeUndefined();
    const short = sb.kube.store.find('nodes', undefined, 'hv-2') as {
      metadata: { labels: Record<string, string> };
    };
    expect(short.metadata.labels['kubernetes.io/hostname']).toBe('hv-2');
  });
});
