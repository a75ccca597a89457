// Story: a restore takes off the cordon drainer made, and only that one. An operator who lifts the
// cordon and puts it back while the restore runs owns the cordon now: it stays.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { uncordonOurs } from '../../src/kube/node-uncordon.ts';
import type { KubeClients } from '../../src/kube/client.ts';
import type { KubeNode } from '../../src/kube/types.ts';
import { node, startFixture, type KubeFixture } from './sandbox.ts';

let f: KubeFixture;
beforeEach(async () => {
  f = await startFixture();
  f.server.store.create('nodes', node('n1'));
});
afterEach(() => f.close());

const MERGE = 'application/merge-patch+json';
const stored = (): KubeNode => f.server.store.get('nodes', undefined, 'n1');
const write = (body: object): KubeNode => f.server.store.patch('nodes', undefined, 'n1', MERGE, body);
const cordon = (on: boolean) => write({ spec: { unschedulable: on ? true : null } });

describe('uncordon only the cordon drainer made', () => {
  it('takes off the cordon it read', async () => {
    const read = cordon(true).metadata.resourceVersion;

    expect(await uncordonOurs(f.k, 'n1', read)).toEqual({ done: 'uncordoned' });
    expect(stored().spec?.unschedulable).toBeUndefined();
  });

  it('other writes since (a label, the record) leave the cordon drainer made: it comes off', async () => {
    const read = cordon(true).metadata.resourceVersion;
    write({ metadata: { labels: { team: 'a' } } });
    write({ metadata: { annotations: { 'drainer.dev/state': '{}' } } });

    expect(await uncordonOurs(f.k, 'n1', read)).toEqual({ done: 'uncordoned' });
    expect(stored().spec?.unschedulable).toBeUndefined();
    expect(stored().metadata.labels?.team).toBe('a');
  });

  it("a cordon lifted and put back since the read is the operator's: it stays", async () => {
    const read = cordon(true).metadata.resourceVersion;
    cordon(false); // kubectl uncordon
    cordon(true); // kubectl cordon: a maintenance of the operator's own

    const result = await uncordonOurs(f.k, 'n1', read);

    expect(result).toMatchObject({ done: 'kept', why: expect.stringMatching(/cordoned again/) });
    expect(stored().spec?.unschedulable).toBe(true);
  });

  it('the operator cordons again between the decision and the write: the 409 decides again, and keeps it', async () => {
    const read = cordon(true).metadata.resourceVersion;
    // the operator's uncordon and cordon land just before drainer's PATCH reaches the server
    let raced = false;
    const k: KubeClients = {
      request: async (req) => {
        if (req.method === 'PATCH' && !raced) {
          raced = true;
          cordon(false);
          cordon(true);
        }
        return f.k.request(req);
      },
      send: (req, o) => f.k.send(req, o),
    };

    const result = await uncordonOurs(k, 'n1', read);

    expect(raced).toBe(true);
    expect(result).toMatchObject({ done: 'kept' });
    expect(stored().spec?.unschedulable).toBe(true);
  });

  it('a node no longer cordoned, or gone, has nothing to take off', async () => {
    const read = cordon(true).metadata.resourceVersion;
    cordon(false);
    expect(await uncordonOurs(f.k, 'n1', read)).toEqual({ done: 'not-cordoned' });
    expect(await uncordonOurs(f.k, 'n2', undefined)).toEqual({ done: 'not-cordoned' });
  });

  it("when the API server no longer holds the changes since the read, the cordon is taken for drainer's, and it says so", async () => {
    // kept, a cordon nobody can tell about would stay for good and start a new evacuation
    const read = cordon(true).metadata.resourceVersion;
    write({ metadata: { labels: { team: 'a' } } });
    f.server.store.compactHistory();

    const result = await uncordonOurs(f.k, 'n1', read);

    expect(result).toEqual({
      done: 'uncordoned',
      unsure: "the API server no longer holds the Node's changes since the restore began",
    });
    expect(stored().spec?.unschedulable).toBeUndefined();
  });
});
