// Story (chaos seed 918273, round 31): node-a's agent is taken off by `drainer.dev/agent=disabled`
// with servers still on the host, so its gate stays. An operator runs `drainer restore --force` there
// (--force: act without the node's agent, or on a record this version cannot read). The restore
// then removed the gate no agent keeps with the servers still on the host, and the next drain took
// them down. --force is about who acts, not about the gate: it goes only with the host empty.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubePod } from '../../src/kube/types.ts';
import { cli } from '../cli/harness.ts';
import { runbookDaemonSet } from '../kube/agent-daemonset.ts';
import { gateAgent, POD, takeAgentOff } from './gate-stack.ts';
import { smallWorld } from './scenario.ts';
import { startStack, type Stack } from './stack.ts';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

function cliFor(s: Stack) {
  const dir = mkdtempSync(path.join(tmpdir(), 'drainer-restore-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, s.sandbox.kube.kubeconfig());
  const config = { ...s.sandbox.drainerConfig, kubeconfig, logLevel: 'warn', nova: { pollInterval: 0.05 } };
  return cli({ files: { 'config.yaml': yaml.dump(config) } });
}

describe('restore --force on a node no agent keeps', () => {
  it('keeps the gate while servers are still on the host', async () => {
    stack = await startStack({ scenario: smallWorld({ servers: 2 }) });
    const s = stack;
    await s.k.request({
      method: 'POST',
      path: '/apis/apps/v1/namespaces/drainer/daemonsets',
      body: runbookDaemonSet(),
    });
    const { agent } = await gateAgent(s, {});
    const gateUid = async () =>
      (await s.k.request<KubePod>({ path: POD }).catch(() => undefined))?.metadata.uid;
    const before = await gateUid();

    // the operator takes the agent off: it stops for good, and keeps the gate over the servers
    await takeAgentOff(s, agent);
    expect(await gateUid()).toBe(before);

    const restored = await cliFor(s)('restore', '--node', 'node-a', '--force');

    expect(restored.code, restored.stderr).toBe(0);
    expect(s.sandbox.openstack.state.serversOnHost('node-a')).toHaveLength(2);
    expect(await gateUid()).toBe(before);
  }, 60_000);
});
