// daemonset/monitoring/: the PrometheusRule, PodMonitor and Grafana dashboard an operator applies
// with `kubectl apply -k daemonset/monitoring/`. Every expression parses with Prometheus' grammar
// (the metric names are checked against a real daemon in test/e2e/metric-names.test.ts), the
// dashboard ships in a sidecar-labelled ConfigMap, and kubectl accepts the objects once the
// Prometheus Operator's CRDs are served.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeApiServer, type KubeApiServer } from '../../src/sandbox/kube/index.ts';
import { hasKubectl, kubectl } from './kubectl.ts';
import { dashboard, expressions, MONITORING, parsePromql, ruleFile } from './promql.ts';

describe('monitoring expressions', () => {
  it('every alert, panel and variable expression parses with the PromQL grammar', () => {
    const all = expressions();
    expect(all.length).toBeGreaterThan(15);
    for (const e of all) {
      const { error, metrics } = parsePromql(e.expr);
      expect(error, `${e.where}: ${e.expr}`).toBeUndefined();
      expect(metrics.length, `${e.where} selects no metric`).toBeGreaterThan(0);
    }
  });

  it('the parser check is real: a broken expression is refused', () => {
    expect(parsePromql('sum(rate(drainer_migrations_total[5m]) by').error).toBeDefined();
    expect(parsePromql('max by (node) (drainer_node_phase{phase="Failed"} == 1').error).toBeDefined();
    expect(parsePromql('rate(drainer_evictions_total[5m])').metrics).toEqual(['drainer_evictions_total']);
  });

  it('the alerts the runbook names exist, each with a severity and a summary', () => {
    const rules = ruleFile().spec.groups.flatMap((g) => g.rules);
    expect(rules.map((r) => r.alert).sort()).toEqual([
      'DrainerAgentDown',
      'DrainerAgentNotReady',
      'DrainerChangeLeftInPlace',
      'DrainerCloudAuthFailed',
      'DrainerDrainGateHeldLong',
      'DrainerDrainGateNotHeld',
      'DrainerEvacuationFailed',
      'DrainerEvacuationMemoryNotFalling',
      'DrainerEvacuationTooLong',
      'DrainerMigrationNotConverging',
      'DrainerMigrationsFailing',
      'DrainerNodeQueuedTooLong',
      'DrainerRecordUnreadable',
    ]);
    for (const r of rules) {
      expect(r.labels?.severity, r.alert).toMatch(/^(info|warning|critical)$/);
      expect(r.annotations?.summary, r.alert).toBeTruthy();
    }
  });

  it('the dashboard has the panels the issue asks for', () => {
    const d = dashboard();
    const uses = (metric: string) =>
      d.panels.filter((p) => (p.targets ?? []).some((t) => t.expr?.includes(metric))).length;
    for (const m of [
      'drainer_node_phase',
      'drainer_migrations_started_total',
      'drainer_migrations_total',
      'drainer_migration_duration_seconds_bucket',
      'drainer_evacuation_duration_seconds_bucket',
      'drainer_evictions_total',
      'drainer_api_requests_total',
      'drainer_restore_failed',
      'drainer_fleet_window_open',
      'drainer_fleet_freeze_active',
      'drainer_fleet_blocker_holding',
      'drainer_fleet_waiting',
      'drainer_migrations_not_converging',
      'drainer_migration_memory_remaining_bytes',
      'drainer_evacuation_memory_left_bytes',
      'drainer_workloads_awaiting_owner',
    ])
      expect(uses(m), m).toBeGreaterThan(0);
  });
});

// Just enough of the Prometheus Operator's CRDs for the API server to serve the kinds.
const operatorCrd = (kind: string, plural: string) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.monitoring.coreos.com` },
  spec: {
    group: 'monitoring.coreos.com',
    scope: 'Namespaced',
    names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
});

describe.skipIf(!hasKubectl)('kubectl apply -k daemonset/monitoring/', () => {
  let api: KubeApiServer;
  let kubeconfig: string;
  beforeAll(async () => {
    api = await startKubeApiServer({ crds: false });
    kubeconfig = path.join(mkdtempSync(path.join(tmpdir(), 'drainer-monitoring-')), 'kubeconfig');
    writeFileSync(kubeconfig, api.kubeconfig());
    for (const crd of [
      operatorCrd('PrometheusRule', 'prometheusrules'),
      operatorCrd('PodMonitor', 'podmonitors'),
    ]) {
      const res = await fetch(`${api.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(crd),
      });
      expect(res.status).toBe(201);
    }
  });
  afterAll(async () => api?.close());

  it('builds a PodMonitor, a PrometheusRule and the dashboard ConfigMap labelled for the Grafana sidecar', async () => {
    const built = await kubectl(['kustomize', MONITORING]);
    expect(built.code, built.stderr).toBe(0);
    type Obj = {
      kind: string;
      metadata: { name: string; namespace?: string; labels?: Record<string, string> };
    };
    const objs = yaml.loadAll(built.stdout) as (Obj & { data?: Record<string, string> })[];
    expect(objs.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'PodMonitor', 'PrometheusRule']);
    for (const o of objs) expect(o.metadata.namespace, o.kind).toBe('drainer');
    const cm = objs.find((o) => o.kind === 'ConfigMap');
    expect(cm?.metadata.labels?.grafana_dashboard).toBe('1');
    expect(JSON.parse(cm?.data?.['drainer-dashboard.json'] ?? '{}')).toEqual(dashboard());
  });

  it('--dry-run=client accepts the operator kinds (the sandbox serves no ConfigMaps: its only complaint)', async () => {
    // asynchronously: the API server it talks to runs in this process
    const run = await kubectl([
      'apply',
      '-k',
      MONITORING,
      '--dry-run=client',
      '--validate=false',
      '--kubeconfig',
      kubeconfig,
    ]);
    expect(run.stdout).toMatch(/prometheusrule\.monitoring\.coreos\.com\/drainer created \(dry run\)/);
    expect(run.stdout).toMatch(/podmonitor\.monitoring\.coreos\.com\/drainer created \(dry run\)/);
    const other = run.stderr
      .split('\n')
      .filter((l) => l && !/no matches for kind "ConfigMap"/.test(l) && !l.startsWith('ensure CRDs'));
    expect(other).toEqual([]);
  });
});
