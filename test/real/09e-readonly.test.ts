// Read-only access (issue 52): the ClusterRole and Role drainer-readonly (daemonset/clusterrole-readonly.yaml,
// role-readonly.yaml) bound to a ServiceAccount, its token in a kubeconfig of its own, as README "Read-only
// access" says. `drainer status`, `plan` and `doctor` work with it on the real API server (its RBAC answers 403
// to anything the roles leave out), with OpenStack credentials of their own, and the token reads no Secret.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { drainerCli, printed } from './support/cli.ts';
import { useReal } from './support/context.ts';
import { kubectl } from './support/kubectl.ts';
import { NAMESPACE } from './support/overlay.ts';

const real = useReal();
const SA = 'drainer-real-readonly';

/** The admin kubeconfig's cluster (server and CA) with the ServiceAccount's token as the only user. */
function tokenKubeconfig(adminKubeconfig: string, token: string): string {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const admin = yaml.load(readFileSync(adminKubeconfig, 'utf8')) as any;
  const ctx =
    admin.contexts.find((c: { name: string }) => c.name === admin['current-context']) ?? admin.contexts[0];
  const cluster = admin.clusters.find((c: { name: string }) => c.name === ctx.context.cluster);
  return yaml.dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [cluster],
    users: [{ name: SA, user: { token } }],
    contexts: [{ name: SA, context: { cluster: cluster.name, user: SA, namespace: NAMESPACE } }],
    'current-context': SA,
  });
}

describe('read-only access with drainer-readonly', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-real-readonly-'));
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    const r = real();
    await r.k.run(['delete', 'clusterrolebinding', SA, '--ignore-not-found']);
    await r.k.run(['-n', NAMESPACE, 'delete', 'rolebinding', SA, '--ignore-not-found']);
    await r.k.run(['-n', NAMESPACE, 'delete', 'serviceaccount', SA, '--ignore-not-found']);
  });

  it("status, plan and doctor work with a ServiceAccount's token bound to it, which reads no Secret", async () => {
    const r = real();
    await r.cluster.waitGateHeld();
    const [server] = await r.nova.boot('readonly', 1);
    await r.k.ok(['-n', NAMESPACE, 'create', 'serviceaccount', SA]);
    const subject = `--serviceaccount=${NAMESPACE}:${SA}`;
    await r.k.ok(['create', 'clusterrolebinding', SA, '--clusterrole=drainer-readonly', subject]);
    await r.k.ok(['-n', NAMESPACE, 'create', 'rolebinding', SA, '--role=drainer-readonly', subject]);
    const token = (await r.k.ok(['-n', NAMESPACE, 'create', 'token', SA, '--duration=30m'])).trim();
    const kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, tokenKubeconfig(r.env.kubeconfig, token), { mode: 0o600 });

    // the token is what the roles say: no Secret, no write
    const asIt = kubectl({ ...r.env, kubeconfig });
    const secrets = await asIt.run(['-n', NAMESPACE, 'get', 'secrets']);
    expect(secrets.stderr).toMatch(/forbidden/i);
    const cordon = await asIt.run(['cordon', r.env.node, '--dry-run=server']);
    expect(cordon.stderr).toMatch(/forbidden/i);

    const status = await drainerCli(r.env, ['status'], { kubeconfig });
    expect(status.code, printed(status)).toBe(0);
    expect(status.stdout).toContain(r.env.node);

    const plan = await drainerCli(r.env, ['plan', '--node', r.env.node], { kubeconfig });
    expect(plan.code, printed(plan)).toBe(0);
    expect(plan.stdout).toContain(server!.name);
    expect(plan.stdout).toMatch(/drain gate: held/);

    const doctor = await drainerCli(r.env, ['doctor'], { kubeconfig });
    expect(doctor.code, printed(doctor)).toBe(0);

    for (const out of [status, plan, doctor])
      expect(`${out.stdout}${out.stderr}`).not.toMatch(/forbidden|403/i);
  });
});
