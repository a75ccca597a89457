// DrainerEvacuationMemoryNotFalling under Prometheus' own rule tests (`promtool test rules`, from
// Debian's `prometheus`, which .ci/run installs in CI): the shipped rule, taken from
// daemonset/monitoring/prometheusrule.yaml as it is, fires for a node whose memory left has not
// gone down for evacuation.memoryAlertAfter (which the agent exports), and for no other.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ruleFile } from '../daemonset/promql.ts';
import { PROMETHEUS_BIN } from './server.ts';

const PROMTOOL = process.env.PROMTOOL_BIN ?? join(dirname(PROMETHEUS_BIN), 'promtool');
const havePromtool = existsSync(PROMTOOL);
const run = promisify(execFile);

/** One promtool rule test: 1-minute samples, the alert's expected firing at each time. */
async function promtool(dir: string, series: Record<string, string>, at: Record<string, object[]>) {
  const rules = join(dir, 'rules.yaml');
  const group = ruleFile().spec.groups.find((g) =>
    g.rules.some((r) => r.alert === 'DrainerEvacuationMemoryNotFalling'),
  );
  await writeFile(rules, yaml.dump({ groups: [group] }));
  const tests = join(dir, 'test.yaml');
  await writeFile(
    tests,
    yaml.dump({
      rule_files: [rules],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: Object.entries(series).map(([s, values]) => ({ series: s, values })),
          alert_rule_test: Object.entries(at).map(([evalTime, alerts]) => ({
            eval_time: evalTime,
            alertname: 'DrainerEvacuationMemoryNotFalling',
            exp_alerts: alerts,
          })),
        },
      ],
    }),
  );
  return run(PROMTOOL, ['test', 'rules', tests]).then(
    (r) => ({ ok: true, out: r.stdout + r.stderr }),
    (err: { stdout?: string; stderr?: string }) => ({
      ok: false,
      out: `${err.stdout ?? ''}${err.stderr ?? ''}`,
    }),
  );
}

const ALERT_AFTER = 'drainer_evacuation_memory_alert_after_seconds{job="drainer", node="%n"}';
const LEFT = 'drainer_evacuation_memory_left_bytes{job="drainer", node="%n", plugin="nova"}';
const FELL = 'drainer_evacuation_memory_left_fell_timestamp_seconds{job="drainer", node="%n", plugin="nova"}';
const on = (tpl: string, node: string) => tpl.replace('%n', node);

const fired = (node: string, value: string) => ({
  exp_labels: { node, plugin: 'nova', severity: 'warning' },
  exp_annotations: {
    summary: `The memory left to move off node ${node} has not gone down for ${value} (nova)`,
    description: expect.any(String),
  },
});

describe.skipIf(!havePromtool)(
  `DrainerEvacuationMemoryNotFalling (${havePromtool ? PROMTOOL : 'skipped: no promtool; apt-get install prometheus'})`,
  () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'drainer-promtool-'));
    });
    afterAll(async () => rm(dir, { recursive: true, force: true }));

    it('fires once the memory left has been flat for the configured time, only for that node', async () => {
      const description =
        ruleFile()
          .spec.groups.flatMap((g) => g.rules)
          .find((r) => r.alert === 'DrainerEvacuationMemoryNotFalling')?.annotations?.description ?? '';
      const withText = (a: ReturnType<typeof fired>) => ({
        ...a,
        exp_annotations: { ...a.exp_annotations, description },
      });
      const series = {
        // stuck: 8 GiB left since the start (t=0), alert after 10 minutes
        [on(ALERT_AFTER, 'stuck')]: '600x30',
        [on(LEFT, 'stuck')]: '8589934592x30',
        [on(FELL, 'stuck')]: '0x30',
        // moving: a server leaves every minute, so the fall is always fresh
        [on(ALERT_AFTER, 'moving')]: '600x30',
        [on(LEFT, 'moving')]: '8589934592-268435456x30',
        [on(FELL, 'moving')]: '0+60x30',
        // done: nothing left, however long ago the last fall
        [on(ALERT_AFTER, 'done')]: '600x30',
        [on(LEFT, 'done')]: '0x30',
        [on(FELL, 'done')]: '0x30',
      };

      const r = await promtool(dir, series, {
        '9m': [],
        '11m': [], // past 10 minutes, but still within the rule's for: 1m
        '13m': [withText(fired('stuck', '13m 0s'))],
      });

      expect(r.out).toMatch(/SUCCESS/);
      expect(r.ok).toBe(true);
    });

    it('the check is real: a wrong expectation fails promtool', async () => {
      const r = await promtool(
        dir,
        { [on(ALERT_AFTER, 'n')]: '600x30', [on(LEFT, 'n')]: '1x30', [on(FELL, 'n')]: '0x30' },
        { '13m': [] },
      );

      expect(r.ok).toBe(false);
      expect(r.out).toMatch(/FAILED/);
    });
  },
);
