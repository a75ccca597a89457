// virt-api's VirtualMachineInstanceMigration create admitter (KubeVirt's pkg/virt-api/webhooks/
// validating-webhook/admitters/migration-create-admitter.go, Admit): it refuses a migration of a VMI
// that does not exist, has finished, cannot live-migrate, or already has an unfinished migration.
import type { CreateHook } from '../../kube/extensions.ts';
import { failure } from '../../kube/status.ts';
import type { KubeObject, Status } from '../../kube/types.ts';
import { RES, tryGet, type StoreLike } from '../store.ts';
import { isFinal } from './migration-phase.ts';
import { vmiStatus } from './vmi.ts';

const WEBHOOK = 'admission webhook "migration-create-validator.kubevirt.io" denied the request';
const refused = (message: string): Status => failure(400, 'BadRequest', `${WEBHOOK}: ${message}`);

function admit(store: StoreLike, m: KubeObject): Status | undefined {
  const ns = m.metadata.namespace ?? 'default';
  const vmiName = (m.spec as { vmiName?: string } | undefined)?.vmiName ?? '';
  if (!vmiName) return refused('spec.vmiName: vmiName is missing');
  const vmi = tryGet(store, RES.vmis, ns, vmiName);
  if (!vmi) return refused(`the VMI "${ns}/${vmiName}" does not exist`);
  const phase = vmiStatus(vmi).phase;
  if (phase === 'Succeeded' || phase === 'Failed') return refused('Cannot migrate VMI in finalized state.');
  const cond = vmiStatus(vmi).conditions?.find((c) => c.type === 'LiveMigratable' && c.status === 'False');
  if (cond)
    return refused(`Cannot migrate VMI, Reason: ${cond.reason ?? ''}, Message: ${cond.message ?? ''}`);
  const open = store
    .list(RES.vmims, { namespace: ns, labelSelector: `kubevirt.io/vmi-name=${vmiName}` })
    .find((o) => !isFinal(o));
  if (open)
    return refused(
      `in-flight migration detected. Active migration job (${open.metadata.uid ?? ''}) is currently already in progress for VMI ${vmiName}.`,
    );
  return undefined;
}

export const migrationCreateAdmitter =
  (store: StoreLike): CreateHook =>
  (resource, obj) =>
    resource === RES.vmims ? admit(store, obj) : undefined;
