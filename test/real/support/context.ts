// One case file's world: the environment, kubectl, the cluster and Nova. Cleanup of what a case booted runs
// after each test, even when it failed.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, type TestContext } from 'vitest';
import { agentLogSince, fourXxIn, unexpected4xx, unexpected4xxText, type Expected4xx } from './agent-log.ts';
import { Cluster } from './cluster.ts';
import { NAMESPACE } from './overlay.ts';
import { realEnv, type RealEnv } from './env.ts';
import { kubectl, type Kubectl } from './kubectl.ts';
import { Nova } from './nova.ts';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface Real {
  env: RealEnv;
  k: Kubectl;
  cluster: Cluster;
  nova: Nova;
  /** A 4xx this case provokes or allows on purpose: not a failure when the agent's log shows it. */
  expect4xx(code: number, path: RegExp | undefined, why: string): void;
}

/** A figure for REAL.md, kept on the test (test/real/support/reporter.ts writes it). */
declare module 'vitest' {
  interface TaskMeta {
    figures?: Record<string, string | number>;
  }
}

export function figure(ctx: TestContext, name: string, value: string | number): void {
  ctx.task.meta.figures = { ...ctx.task.meta.figures, [name]: value };
}

/** The API server's address from the kubeconfig (the agent on the host's network dials it directly). */
export function apiServer(kubeconfig: string): { host: string; port: string } {
  const kc = yaml.load(readFileSync(kubeconfig, 'utf8')) as {
    'current-context': string;
    contexts: { name: string; context: { cluster: string } }[];
    clusters: { name: string; cluster: { server: string } }[];
  };
  const ctx = kc.contexts.find((c) => c.name === kc['current-context']) ?? kc.contexts[0];
  const cluster = kc.clusters.find((c) => c.name === ctx?.context.cluster) ?? kc.clusters[0];
  const url = new URL(cluster!.cluster.server);
  return { host: url.hostname, port: url.port || '443' };
}

export const seconds = (ms: number): number => Math.round(ms / 100) / 10;

export function useReal(): () => Real {
  let real: Real | undefined;
  let expected: Expected4xx[] = [];
  let caseStart = new Date();
  let failed: string | undefined;
  beforeAll(async () => {
    const env = realEnv();
    const k = kubectl(env);
    const expect4xx = (code: number, path: RegExp | undefined, why: string) =>
      void expected.push({ code, ...(path ? { path } : {}), why });
    real = { env, k, cluster: new Cluster(env, k), nova: await Nova.open(env), expect4xx };
  });
  // each case starts from a node in service, whatever an earlier run left
  beforeEach(async (ctx) => {
    expected = [];
    failed = undefined;
    ctx.onTestFailed(() => void (failed = ctx.task.name));
    await real?.cluster.ensureInService();
    // the agent's log is judged from here: what the node's return to service cost is not this case's
    caseStart = new Date();
  });
  // a case that failed half way leaves the node in service again before its servers are deleted; the
  // agent's log is read first (before a cleanup's own requests), and judged once all is cleaned up
  afterEach(async () => {
    if (!real) return;
    let unexpected: string | undefined;
    try {
      const lines = await agentLogSince(real.k, NAMESPACE, await real.cluster.agents(), caseStart);
      if (failed !== undefined) keepLog(failed, lines);
      unexpected = unexpected4xxText(unexpected4xx(fourXxIn(lines), expected));
      await real.cluster.ensureInService();
    } finally {
      await real.nova.cleanup.run();
    }
    if (unexpected) throw new Error(unexpected);
  });
  afterAll(async () => {
    await real?.nova.cleanup.run();
  });
  return () => {
    if (!real) throw new Error('the real world is not set up (beforeAll failed?)');
    return real;
  };
}

/** Where a failed case's agent log is kept (the uninstall at the suite's end takes the pods' logs with it). */
export const FAILED_LOGS = path.join(REPO, 'real-logs');

function keepLog(caseName: string, lines: readonly string[]): void {
  mkdirSync(FAILED_LOGS, { recursive: true });
  const file = path.join(FAILED_LOGS, `${caseName.replace(/[^A-Za-z0-9]+/g, '-').slice(0, 80)}.log`);
  writeFileSync(file, lines.join('\n') + '\n');
  process.stderr.write(`the agent's log of the failed case is kept in ${path.relative(REPO, file)}\n`);
}
