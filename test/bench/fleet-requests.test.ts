import { describe, expect, it } from 'vitest';
import { fleetRequests } from '../../bench/lib/fleet-requests.ts';

describe("the fleet bench's count of the budget's requests", () => {
  it("counts a list of the queued Nodes as a queue list, and the drain gate's Pod lists not", () => {
    const log = [
      { method: 'GET', path: '/api/v1/nodes?labelSelector=drainer.dev%2Fqueued', status: 200 },
      // a waiter's page of the nodes ahead of it
      {
        method: 'GET',
        path: '/api/v1/nodes?labelSelector=drainer.dev%2Fqueued%3C1764000000001&limit=51',
        status: 200,
      },
      // not the budget's: another label beside it
      { method: 'GET', path: '/api/v1/nodes?labelSelector=drainer.dev%2Fqueued%2Crack%3Dr1', status: 200 },
      {
        method: 'GET',
        path: '/api/v1/namespaces/drainer/pods?labelSelector=drainer.dev%2Fgate-node%3Dhv-01&limit=500',
        status: 200,
      },
      {
        method: 'GET',
        path: '/api/v1/namespaces/drainer/pods?labelSelector=drainer.dev/gate-node=hv-02',
        status: 200,
      },
    ];
    expect(fleetRequests(log).queueLists).toBe(2);
  });

  it('tells Lease watches, lists, reads and lost races apart', () => {
    const leases = '/apis/coordination.k8s.io/v1/namespaces/drainer/leases';
    const log = [
      { method: 'GET', path: `${leases}?watch=1&allowWatchBookmarks=true`, status: 200 },
      {
        method: 'GET',
        path: `${leases}?labelSelector=app.kubernetes.io%2Fcomponent%3Dfleet-slot`,
        status: 200,
      },
      { method: 'GET', path: `${leases}/drainer-evacuation-0`, status: 200 },
      { method: 'PUT', path: `${leases}/drainer-evacuation-0`, status: 409 },
      { method: 'POST', path: leases, status: 409 },
    ];
    expect(fleetRequests(log)).toEqual({
      leaseWatches: 1,
      leaseLists: 1,
      leaseGets: 1,
      leaseConflicts: 2,
      queueLists: 0,
    });
  });
});
