import { flavorId } from './flavors.ts';
import { createHash } from 'node:crypto';
// JSON shapes of Nova's resources, per microversion (fields as seen on Nova 26 "Zed").
import { novaTime, isoSeconds } from '../ids.ts';
import type { Microversion } from '../microversion.ts';
import { atLeast } from '../microversion.ts';
import type { NovaContext } from './context.ts';
import type { ComputeNode, Migration, NovaModel, Server, Service } from './model.ts';
import { IN_PROGRESS, isDeleted, serverStatus } from './model.ts';

export function renderService(s: Service, v: Microversion): Record<string, unknown> {
  return {
    binary: s.binary,
    host: s.host,
    id: atLeast(v, 53) ? s.uuid : s.id,
    zone: s.zone,
    status: s.status,
    state: s.forcedDown ? 'down' : 'up',
    updated_at: novaTime(s.updatedAt),
    disabled_reason: s.disabledReason,
    ...(atLeast(v, 11) ? { forced_down: s.forcedDown } : {}),
  };
}

function links(ctx: NovaContext, path: string): { rel: string; href: string }[] {
  return [
    { rel: 'self', href: `${ctx.computeUrl}/${path}` },
    { rel: 'bookmark', href: `${ctx.bookmarkUrl}/${path}` },
  ];
}

function flavor(ctx: NovaContext, s: Server): Record<string, unknown> {
  if (atLeast(ctx.version, 47)) {
    return {
      vcpus: s.vcpus,
      ram: s.ramMb,
      disk: s.diskGb,
      ephemeral: 0,
      swap: 0,
      original_name: s.ramMb === 512 ? 'm1.tiny' : `m1.ram${s.ramMb}`,
      extra_specs: {},
    };
  }
  const id = flavorId(s);
  return { id, links: [{ rel: 'bookmark', href: `${ctx.bookmarkUrl}/flavors/${id}` }] };
}

export function renderServerBrief(ctx: NovaContext, s: Server): Record<string, unknown> {
  return { id: s.id, links: links(ctx, `servers/${s.id}`), name: s.name };
}

export function renderServer(ctx: NovaContext, s: Server, show = false): Record<string, unknown> {
  const v = ctx.version;
  const admin = ctx.admin;
  const imageId = '4ef80009-2235-4267-ac7d-a4d110e557cd';
  const out: Record<string, unknown> = {
    id: s.id,
    name: s.name,
    status: serverStatus(s.vmState, s.taskState),
    tenant_id: s.tenantId,
    user_id: s.userId,
    metadata: { ...s.metadata },
    // Nova: sha224(project_id + host), so clients can group servers by host without seeing it.
    hostId: s.host
      ? createHash('sha224')
          .update(s.tenantId + s.host)
          .digest('hex')
      : '',
    image: s.bootFromVolume
      ? ''
      : { id: imageId, links: [{ rel: 'bookmark', href: `${ctx.bookmarkUrl}/images/${imageId}` }] },
    flavor: flavor(ctx, s),
    created: isoSeconds(s.createdAt),
    updated: isoSeconds(s.updatedAt),
    addresses: {},
    accessIPv4: '',
    accessIPv6: '',
    links: links(ctx, `servers/${s.id}`),
    'OS-DCF:diskConfig': 'MANUAL',
    progress: 0,
    'OS-EXT-AZ:availability_zone': 'nova',
    config_drive: '',
    key_name: null,
    'OS-SRV-USG:launched_at': novaTime(s.createdAt),
    'OS-SRV-USG:terminated_at': null,
  };
  if (admin && !ctx.hideHost) {
    out['OS-EXT-SRV-ATTR:host'] = s.host;
    out['OS-EXT-SRV-ATTR:instance_name'] = s.instanceName;
    out['OS-EXT-SRV-ATTR:hypervisor_hostname'] = s.node;
    if (atLeast(v, 3)) {
      Object.assign(out, {
        'OS-EXT-SRV-ATTR:reservation_id': s.reservationId,
        'OS-EXT-SRV-ATTR:launch_index': 0,
        'OS-EXT-SRV-ATTR:hostname': s.name,
        'OS-EXT-SRV-ATTR:kernel_id': '',
        'OS-EXT-SRV-ATTR:ramdisk_id': '',
        'OS-EXT-SRV-ATTR:root_device_name': '/dev/sda',
        'OS-EXT-SRV-ATTR:user_data': null,
      });
    }
  }
  // like Nova: the fault of a server in ERROR
  if (s.vmState === 'error' && s.fault)
    out.fault = { code: 500, created: novaTime(s.updatedAt), message: s.fault };
  out['OS-EXT-STS:task_state'] = s.taskState;
  out['OS-EXT-STS:vm_state'] = s.vmState;
  out['OS-EXT-STS:power_state'] = s.powerState;
  out['os-extended-volumes:volumes_attached'] = [];
  if (atLeast(v, 16) && admin) out.host_status = s.host ? hostStatus(ctx.model, s.host) : '';
  if (atLeast(v, 9)) out.locked = s.locked;
  if (atLeast(v, 73)) out.locked_reason = null;
  if (atLeast(v, 19)) out.description = null;
  if (atLeast(v, 26)) out.tags = [];
  if (atLeast(v, 63)) out.trusted_image_certificates = null;
  // 2.71: only GET /servers/{id} (not the list) names the server groups.
  if (atLeast(v, 71) && show) out.server_groups = [];
  return out;
}

function hostStatus(model: NovaModel, host: string): string {
  const svc = model.computeService(host);
  if (!svc) return 'UNKNOWN';
  if (svc.forcedDown) return 'DOWN';
  return svc.status === 'disabled' ? 'MAINTENANCE' : 'UP';
}

export function renderHypervisor(
  ctx: NovaContext,
  n: ComputeNode,
  detail: boolean,
  withServers: boolean,
): Record<string, unknown> {
  const v = ctx.version;
  const svc = ctx.model.computeService(n.serviceHost);
  const out: Record<string, unknown> = {
    id: atLeast(v, 53) ? n.uuid : n.id,
    hypervisor_hostname: n.hostname,
    state: svc?.forcedDown ? 'down' : 'up',
    status: svc?.status ?? 'enabled',
  };
  if (detail) {
    Object.assign(out, {
      hypervisor_type: 'fake',
      hypervisor_version: 1000,
      host_ip: '127.0.0.1',
      service: {
        id: atLeast(v, 53) ? svc?.uuid : svc?.id,
        host: n.serviceHost,
        disabled_reason: svc?.disabledReason ?? null,
      },
    });
    if (atLeast(v, 88)) {
      out.uptime = null;
    } else {
      const servers = [...ctx.model.servers.values()].filter((s) => s.node === n.hostname && !isDeleted(s));
      const used = 512 + servers.reduce((a, s) => a + s.ramMb, 0);
      const cpuInfo = { arch: 'x86_64', model: 'Nehalem', vendor: 'Intel', features: ['pge', 'clflush'] };
      Object.assign(out, {
        vcpus: 1000,
        memory_mb: n.ramMb,
        local_gb: 600000,
        vcpus_used: servers.length,
        memory_mb_used: used,
        local_gb_used: servers.length,
        free_ram_mb: n.ramMb - used,
        free_disk_gb: 600000 - servers.length,
        current_workload: 0,
        running_vms: servers.length,
        disk_available_least: 0,
        cpu_info: atLeast(v, 28) ? cpuInfo : JSON.stringify(cpuInfo),
      });
    }
  }
  if (withServers) {
    const servers = [...ctx.model.servers.values()].filter((s) => s.node === n.hostname && !isDeleted(s));
    if (servers.length > 0) out.servers = servers.map((s) => ({ name: s.instanceName, uuid: s.id }));
  }
  return out;
}

/** One row of GET /os-migrations. */
export function renderMigration(ctx: NovaContext, m: Migration): Record<string, unknown> {
  const v = ctx.version;
  const out: Record<string, unknown> = { id: m.id };
  if (atLeast(v, 59)) out.uuid = m.uuid;
  Object.assign(out, {
    source_compute: m.sourceCompute,
    dest_compute: m.destCompute,
    source_node: m.sourceNode,
    dest_node: m.destNode,
    dest_host: null,
    old_instance_type_id: 1,
    new_instance_type_id: 1,
    instance_uuid: m.instanceUuid,
    status: m.status,
  });
  if (atLeast(v, 23)) out.migration_type = m.type;
  if (atLeast(v, 80)) Object.assign(out, { user_id: m.userId, project_id: m.projectId });
  out.created_at = novaTime(m.createdAt);
  out.updated_at = novaTime(m.updatedAt);
  if (atLeast(v, 23) && m.type === 'live-migration' && IN_PROGRESS.has(m.status)) {
    out.links = links(ctx, `servers/${m.instanceUuid}/migrations/${m.id}`);
  }
  return out;
}

/** One item of GET /servers/{id}/migrations. */
export function renderServerMigration(ctx: NovaContext, m: Migration): Record<string, unknown> {
  // libvirt's job counters while it copies (integers); null before it runs, as Nova's record
  const c = ctx.compute.counters(m);
  const out: Record<string, unknown> = {
    created_at: novaTime(m.createdAt),
    dest_compute: m.destCompute,
    dest_host: null,
    dest_node: m.destNode,
    disk_processed_bytes: c ? 0 : null,
    disk_remaining_bytes: c ? 0 : null,
    disk_total_bytes: c ? 0 : null,
    id: m.id,
    memory_processed_bytes: c ? c.memoryProcessed : null,
    memory_remaining_bytes: c ? c.memoryRemaining : null,
    memory_total_bytes: c ? c.memoryTotal : null,
    server_uuid: m.instanceUuid,
    source_compute: m.sourceCompute,
    source_node: m.sourceNode,
    status: m.status,
    updated_at: novaTime(m.updatedAt),
  };
  if (atLeast(ctx.version, 59)) out.uuid = m.uuid;
  if (atLeast(ctx.version, 80)) Object.assign(out, { user_id: m.userId, project_id: m.projectId });
  return out;
}
