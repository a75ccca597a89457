// A real Prometheus (Debian's `prometheus` package) for the blocker tests: started here on
// 127.0.0.1 on a free port, with a temp dir, no scrape target, and one alert rule the test turns
// on and off (rewrite the rule file, POST /-/reload).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PROMETHEUS_BIN = process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus';
export const havePrometheus = existsSync(PROMETHEUS_BIN);

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

const rules = (firing: boolean) => `groups:
  - name: drainer-test
    interval: 1s
    rules:
      - alert: CephHealthWarning
        expr: vector(${firing ? 1 : 0}) > 0
        labels: { severity: warning, cluster: ceph-a }
        annotations: { summary: test alert for the drainer blocker }
`;

export interface Prometheus {
  readonly url: string;
  /** The rule fires (true) or not; applied with a reload. */
  fire(on: boolean): Promise<void>;
  /** The alert names /api/v1/alerts says are firing. */
  firing(): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startPrometheus(firing: boolean): Promise<Prometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'drainer-prom-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  await writeFile(join(dir, 'rules.yml'), rules(firing));
  await writeFile(
    join(dir, 'prometheus.yml'),
    `global: { evaluation_interval: 1s }\nrule_files: [${JSON.stringify(join(dir, 'rules.yml'))}]\nscrape_configs: []\n`,
  );
  const child: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.enable-lifecycle',
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-4000)));
  const get = async (path: string) => {
    const res = await fetch(`${url}${path}`);
    return { ok: res.ok, body: await res.text() };
  };
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${log}`);
    const ready = await get('/-/ready').catch(() => undefined);
    if (ready?.ok) break;
    if (i > 300) throw new Error(`prometheus not ready: ${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    async fire(on) {
      await writeFile(join(dir, 'rules.yml'), rules(on));
      const res = await fetch(`${url}/-/reload`, { method: 'POST' });
      if (!res.ok) throw new Error(`reload failed: ${res.status} ${await res.text()}`);
    },
    async firing() {
      const body = JSON.parse((await get('/api/v1/alerts')).body) as {
        data: { alerts: { state: string; labels: { alertname: string } }[] };
      };
      return body.data.alerts.filter((a) => a.state === 'firing').map((a) => a.labels.alertname);
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
