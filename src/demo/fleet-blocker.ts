// The fleet act's blocker: a backup pod (app=backup) runs on the second rack node, so
// fleet.blockers.podSelector holds that node (and only it) Queued, saying why, until the backup
// ends; the act ends it once the first node is evacuated.
import type { Sandbox } from '../sandbox/index.ts';

export const BLOCKER_SELECTOR = 'app=backup';
const POD = 'backup-1';
const NAMESPACE = 'default';

async function call(sb: Sandbox, method: string, path: string, body?: object): Promise<void> {
  const res = await fetch(`${sb.kube.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${await res.text()}`);
}

export const startBackup = (sb: Sandbox, node: string): Promise<void> =>
  call(sb, 'POST', `/api/v1/namespaces/${NAMESPACE}/pods`, {
    metadata: { name: POD, namespace: NAMESPACE, labels: { app: 'backup' } },
    spec: { nodeName: node, containers: [{ name: 'backup', image: 'backup' }] },
  });

export const endBackup = (sb: Sandbox): Promise<void> =>
  call(sb, 'DELETE', `/api/v1/namespaces/${NAMESPACE}/pods/${POD}?gracePeriodSeconds=0`);
