// The PromQL of daemonset/monitoring/: every alert and dashboard expression, parsed with
// Prometheus' own grammar (@prometheus-io/lezer-promql, what its web UI uses), and the metric names
// they select.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import yaml from 'js-yaml';

export const MONITORING = 'daemonset/monitoring';

/** Metrics the rules use that drainer does not export: `up` is Prometheus' own, kube_* kube-state-metrics'. */
export const EXTERNAL_METRICS = new Set(['up', 'kube_daemonset_status_number_unavailable']);

export interface Expression {
  readonly where: string;
  readonly expr: string;
}

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface RuleFile {
  kind: string;
  spec: { groups: { name: string; rules: Rule[] }[] };
}
interface Target {
  expr?: string;
}
export interface Dashboard {
  title: string;
  panels: { title: string; type: string; targets?: Target[] }[];
  templating: { list: { name: string; query?: unknown }[] };
}

export const ruleFile = (): RuleFile =>
  yaml.load(readFileSync(path.join(MONITORING, 'prometheusrule.yaml'), 'utf8')) as RuleFile;
export const dashboard = (): Dashboard =>
  JSON.parse(readFileSync(path.join(MONITORING, 'drainer-dashboard.json'), 'utf8')) as Dashboard;

/** Grafana's variables, replaced as Grafana does before the query reaches Prometheus. */
const grafanaVariables = (expr: string): string =>
  expr.replaceAll('$__rate_interval', '5m').replaceAll('$__interval', '1m').replaceAll('$node', '.*');

export function expressions(): Expression[] {
  const out: Expression[] = [];
  for (const g of ruleFile().spec.groups)
    for (const r of g.rules) out.push({ where: `rule ${r.alert ?? r.record ?? '?'}`, expr: r.expr });
  const d = dashboard();
  for (const p of d.panels)
    for (const t of p.targets ?? [])
      if (t.expr) out.push({ where: `panel "${p.title}"`, expr: grafanaVariables(t.expr) });
  // label_values(<selector>, label): the selector is PromQL
  for (const v of d.templating.list) {
    const q = (v.query as { query?: string } | undefined)?.query;
    const m = q ? /^label_values\((.*),\s*\w+\)$/.exec(q) : null;
    if (m?.[1]) out.push({ where: `variable ${v.name}`, expr: m[1] });
  }
  return out;
}

/** Parses one expression: the first syntax error's position, and every metric name it selects. */
export function parsePromql(expr: string): { error?: string; metrics: string[] } {
  const tree = parser.parse(expr);
  const metrics: string[] = [];
  let error: string | undefined;
  tree.iterate({
    enter: (n) => {
      if (n.type.isError && error === undefined)
        error = `syntax error at ${n.from}: …${expr.slice(Math.max(0, n.from - 20), n.from + 20)}…`;
      if (n.name === 'Identifier' && n.node.parent?.name === 'VectorSelector')
        metrics.push(expr.slice(n.from, n.to));
    },
  });
  return { ...(error ? { error } : {}), metrics };
}

/** Every metric name a /metrics text exposes: sample names, and each histogram's _bucket/_sum/_count. */
export function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type?.[1]) {
      names.add(type[1]);
      if (type[2] === 'histogram' || type[2] === 'summary')
        for (const s of ['_bucket', '_sum', '_count']) names.add(type[1] + s);
    } else if (line && !line.startsWith('#')) names.add(line.split(/[{ ]/)[0] ?? '');
  }
  return names;
}
