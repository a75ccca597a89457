// Story: a real Prometheus holds the fleet. While CephHealthWarning fires, a cordoned node waits
// Queued, nothing changed, and says which alert; when the rule stops firing it goes on. The
// verdict is the fleet's, shared on the drainer-blockers Lease. Prometheus unreachable holds too,
// and says so. Needs Debian's `prometheus` (apt-get install prometheus; .ci/run installs it in CI).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { firingAlerts } from '../../src/core/fleet/prometheus.ts';
import { BLOCKERS_LEASE, VERDICT_ANNOTATION } from '../../src/core/fleet/shared-verdict.ts';
import type { KubeLease } from '../../src/kube/lease.ts';
import { rack } from '../e2e/scenario.ts';
import { startStack, until, type Stack } from '../e2e/stack.ts';
import { freePort, havePrometheus, PROMETHEUS_BIN, startPrometheus, type Prometheus } from './server.ts';

const record = (stack: Stack, node: string) => stack.record(node).catch(() => undefined);

describe.skipIf(!havePrometheus)(
  `fleet blocked by a real Prometheus (${havePrometheus ? PROMETHEUS_BIN : `skipped: no ${PROMETHEUS_BIN}; apt-get install prometheus`})`,
  () => {
    let prom: Prometheus;
    let stack: Stack | undefined;
    beforeAll(async () => {
      prom = await startPrometheus(true);
      await until('the rule fires', async () => (await prom.firing()).includes('CephHealthWarning'), 30_000);
    }, 60_000);
    afterAll(async () => prom?.stop());
    afterEach(async () => {
      await stack?.close();
      stack = undefined;
    });

    it('the client sees the firing alert by name pattern and labels, and nothing for other labels', async () => {
      const ask = (alertName: string, labels: Record<string, string> = {}) =>
        firingAlerts({ url: prom.url, alertName, labels, requestTimeout: 5 }, AbortSignal.timeout(10_000));
      expect(await ask('Ceph.*')).toEqual(['CephHealthWarning']);
      expect(await ask('Ceph.*', { cluster: 'ceph-a' })).toEqual(['CephHealthWarning']);
      expect(await ask('Ceph.*', { cluster: 'ceph-b' })).toEqual([]);
      expect(await ask('Ceph')).toEqual([]); // the pattern matches the whole name
      expect(await ask('NovaComputeDown|CephHealthWarning')).toEqual(['CephHealthWarning']);
    });

    it('the fleet waits while the alert fires and goes on when the rule stops firing; one shared verdict', async () => {
      stack = await startStack({
        scenario: rack(2, 1),
        config: {
          fleet: {
            maxConcurrentEvacuations: 2,
            blockers: { prometheus: { url: prom.url, alertName: 'Ceph.*|NovaComputeDown' }, interval: 1 },
          },
        },
      });
      const s = stack;
      const agents = ['r1', 'r2'].map((n) => s.startAgent(n));
      await until('agents ready', () => agents.every((a) => a.agent.ready().ready));
      await s.cordon('r1');
      await s.cordon('r2');
      for (const n of ['r1', 'r2']) {
        const r = await until(`${n} held by Prometheus`, async () => {
          const x = await record(s, n);
          return x?.waiting?.kind === 'prometheus' ? x : undefined;
        });
        expect(r.phase).toBe('Queued');
        expect(r.waiting?.reason).toBe('blocked: Prometheus alert firing: CephHealthWarning');
        expect((await s.node(n)).spec?.taints ?? []).not.toContainEqual(
          expect.objectContaining({ key: 'drainer.dev/evacuating' }),
        );
      }
      const os = s.sandbox.openstack.state;
      for (const v of os.servers()) expect(os.migrateCalls(v.id)).toBe(0);
      // the fleet's verdict sits on one Lease, read from the agents' Lease watch
      const lease = await s.k.request<KubeLease>({
        path: `/apis/coordination.k8s.io/v1/namespaces/drainer/leases/${BLOCKERS_LEASE}`,
      });
      const verdict = JSON.parse(lease.metadata.annotations?.[VERDICT_ANNOTATION] ?? '{}') as {
        firing: string[];
      };
      expect(verdict.firing).toEqual(['CephHealthWarning']);
      expect(lease.spec?.holderIdentity).toMatch(/^blocker-check\/r[12]$/);
      const metrics = await Promise.all(agents.map((a) => a.metrics.text()));
      expect(metrics.join('\n')).toMatch(/drainer_fleet_blocker_holding\{blocker="prometheus"\} 1/);

      await prom.fire(false);
      for (const n of ['r1', 'r2'])
        expect(
          await until(
            `${n} evacuated`,
            async () => ((await record(s, n))?.phase === 'Evacuated' ? true : undefined),
            30_000,
          ),
        ).toBe(true);
      expect(os.serversOnHost('r1')).toEqual([]);
      await prom.fire(true);
    }, 90_000);

    it('Prometheus unreachable: blocked, and the record says why', async () => {
      const closed = await freePort();
      stack = await startStack({
        scenario: rack(1, 1),
        config: {
          fleet: {
            blockers: { prometheus: { url: `http://127.0.0.1:${closed}`, requestTimeout: 2 }, interval: 1 },
          },
        },
      });
      const s = stack;
      const a = s.startAgent('r1');
      await until('agent ready', () => a.agent.ready().ready);
      await s.cordon('r1');
      const r = await until('r1 held', async () => {
        const x = await record(s, 'r1');
        return x?.waiting?.kind === 'prometheus' ? x : undefined;
      });
      expect(r.phase).toBe('Queued');
      expect(r.waiting?.reason).toBe(
        `blocked: Prometheus cannot be evaluated: http://127.0.0.1:${closed}/api/v1/alerts unreachable: connect ECONNREFUSED 127.0.0.1:${closed}`,
      );
      const os = s.sandbox.openstack.state;
      for (const v of os.servers()) expect(os.migrateCalls(v.id)).toBe(0);
    }, 60_000);
  },
);
