// The Nova backend: disable the host's nova-compute service (remembering whether we did),
// move every server off it, and on restore re-enable only a service that is still ours.
import { presenceField, novaPresence } from '../on-host.ts';
import { progressOnHost } from '../../core/backends/vm-count.ts';
import type {
  BackendPlugin,
  EvacuationContext,
  LeftForGoodContext,
  NodeRef,
  Outcome,
  Plan,
  PlanBlocker,
  PlannedWorkload,
  PlanOptions,
  RestoreContext,
  ShutdownFallback,
  ShutdownFallbackContext,
  StrandedChange,
  StrandedOptions,
  WorkloadProgress,
} from '../../core/backends/plugin.ts';
import type { NovaConfig } from '../../config/schema.ts';
import type { Logger } from '../../observability/logger.ts';
import { novaCapacity } from './capacity.ts';
import { planWorkload } from './classify.ts';
import type { ComputeClient } from './compute.ts';
import type { Sleep } from './http.ts';
import { resolveServiceHost, type HostMapping } from './mapping.ts';
import { Migrator } from './migrator.ts';
import type { PlacementClient } from './placement.ts';
import { waitForOthers } from './manual.ts';
import { parseNovaRecord, toPluginRecord, type NovaRecord } from './record.ts';
import { novaStranded } from './stranded.ts';
import { startStopped, type RestartOptions } from './restart.ts';
import { startMarked } from './marked.ts';
import { leftDisabled, restoreUnrecorded } from './restore-unrecorded.ts';
import { dropClaims, restartOnLanding } from './moved-marked.ts';
import { confirmLeft } from './confirm-left.ts';
import { listAhead } from './list-ahead.ts';
import { markingStops } from './mark-stops.ts';
import { stopForShutdown } from './shutdown-stop.ts';
import { hostOf, memoryField, taskStateOf, type NovaServer, type NovaService } from './types.ts';
import { MIGRATION_MODE_KEY } from '../../names.ts';
import { invalidPolicies, MAINTENANCE_KEY, WAYS } from './policy.ts';

export interface NovaPluginOptions {
  compute: ComputeClient;
  nova: NovaConfig;
  log: Logger;
  sleep: Sleep;
  now: () => number;
  /** For the capacity check (evacuation.capacityCheck); without it the plan carries no verdict. */
  placement?: PlacementClient;
}

const MOVES = new Set(['live-migrate', 'cold-migrate', 'notify']);
/**
 * How long the plan's service lookup serves the evacuation that follows it: long enough for the
 * cordon → disable path (the plan, then at once the evacuation), too short to act on a stale status.
 */
const PLANNED_MAPPING_MS = 5000;

const HOSTS_HIDDEN: PlanBlocker = {
  kind: 'missing-rights',
  message:
    "nova: Nova hides the servers' host (OS-EXT-SRV-ATTR:host) from drainer's credentials, so a server " +
    'that stayed cannot be told from one that moved; give drainer the admin role (or the policy ' +
    'os_compute_api:os-extended-server-attributes)',
};

export class NovaPlugin implements BackendPlugin {
  readonly name = 'nova';
  readonly #o: NovaPluginOptions;
  #saidUnchecked = false;
  /** The last plan's node → service lookup, so the disable right after it needs no second one. */
  #planned: { node: string; at: number; mapping: HostMapping } | undefined;
  /** Node → until when its host shutdown's fallback holds it: its evacuation starts nothing then. */
  readonly #held = new Map<string, number>();

  constructor(opts: NovaPluginOptions) {
    this.#o = opts;
  }

  async plan(node: NodeRef, signal: AbortSignal, opts?: PlanOptions): Promise<Plan> {
    const { compute, nova, placement } = this.#o;
    await compute.init(signal);
    const mapping = await resolveServiceHost(compute, node.name, nova.hostMapping, signal);
    this.#planned = { node: node.name, at: this.#o.now(), mapping };
    const { host } = mapping;
    const servers = await compute.listServersOnHost(host, signal);
    if (node.mode === 'manual')
      return {
        plugin: this.name,
        location: host,
        workloads: servers.map((s) => manualWorkload(s, node.name)),
      };
    const workloads = servers.map((s) => ({
      ...planWorkload(s, { ...nova, reboot: node.reboot === true }),
      ...memoryField(s),
    }));
    // Without the host attribute a server that stayed looks like one that moved: refuse up front.
    if (servers.some((s) => hostOf(s) === undefined))
      return { plugin: this.name, location: host, workloads, blockers: [HOSTS_HIDDEN] };
    // an owner's typo refuses the evacuation before any change, whatever drain policy applies
    const invalid = invalidPolicies(servers);
    if (invalid.length)
      return { plugin: this.name, location: host, workloads, blockers: [invalidPolicy(invalid)] };
    if (!opts?.capacity || !placement) return { plugin: this.name, location: host, workloads };
    // what will start a migration: not the blocked, skipped or already migrating ones
    const moving = servers.filter((s, i) => MOVES.has(workloads[i]!.action) && taskStateOf(s) === null);
    const capacity = await novaCapacity({ compute, placement, source: host, servers: moving, signal });
    if (capacity.status === 'unknown' && capacity.reason === 'unsupported' && !this.#saidUnchecked) {
      this.#saidUnchecked = true;
      this.#o.log.warn(capacity.message);
    }
    return { plugin: this.name, location: host, workloads, capacity };
  }

  async checkAuth(signal: AbortSignal): Promise<void> {
    await this.#o.compute.authenticate(signal);
  }

  async evacuate(node: NodeRef, ctx: EvacuationContext): Promise<Outcome> {
    const { compute, nova } = this.#o;
    const { signal, log } = ctx;
    const { microversion } = await compute.init(signal);
    const prev = parseNovaRecord(ctx.record);
    const mapping = await this.#mapping(node, prev, signal);
    log.info({ host: mapping.host, via: mapping.via, microversion }, 'nova-compute service found');

    if (ctx.dryRun) return this.#dryRun(node, signal);

    let record: NovaRecord = {
      host: mapping.host,
      serviceId: mapping.service.id,
      disabledByUs: prev?.disabledByUs ?? false,
      reason: prev?.reason ?? null,
      microversion,
      migrations: prev?.migrations ?? {},
    };
    const save = async (r: NovaRecord) => {
      record = r;
      await ctx.save(toPluginRecord(r));
    };
    // the host's first listing goes out beside the disable (list-ahead.ts)
    const listing = node.mode === 'manual' ? compute : listAhead(compute, mapping.host, signal);
    await this.#disable(mapping.service, ctx, record, save);
    if (node.mode === 'manual') return waitForOthers(this.name, mapping.host, node.name, this.#o, ctx);

    // every os-stop is marked on its server first: the memory of it outlives this Node and record
    const marking = markingStops(listing, { node: node.name, trigger: ctx.trigger }, log);
    await marking.adopt(record.migrations, signal);
    // a marked server moved onto a host in service is started there at once (moved-marked.ts)
    const moved = restartOnLanding(compute, mapping.host, ctx, this.#restartOptions(node));
    const migrator = new Migrator({
      compute: marking.compute,
      source: mapping.host,
      nova,
      log,
      sleep: this.#o.sleep,
      now: this.#o.now,
      signal,
      abortOnCancel: ctx.abortOnCancel,
      reboot: node.reboot === true,
      resumed: record.migrations,
      listedAhead: true,
      beforeStart: (id, entry) => {
        // a new attempt starts its entry afresh, but keeps what its way out recorded
        const { notifiedAt, stopped } = record.migrations[id] ?? {};
        // a server drainer stopped (its mark) that this record moves: this record's to start again
        const claimed = stopped || marking.marked(id);
        const kept = { ...(notifiedAt ? { notifiedAt } : {}), ...(claimed ? { stopped: true } : {}) };
        return save({ ...record, migrations: { ...record.migrations, [id]: { ...kept, ...entry } } });
      },
      remember: async (id, patch) => {
        // made before any attempt (notify's clock, a stop): no start yet, so a resumed one times its move from its own start
        const entry = record.migrations[id] ?? { attempts: 0, startedAt: '' };
        await save({ ...record, migrations: { ...record.migrations, [id]: { ...entry, ...patch } } });
      },
      progress: (items) => ctx.progress(items),
      landed: (s) => moved.landed(s),
      heldUntil: () => this.#held.get(node.name),
    });
    const workloads = await migrator.run();
    await dropClaims(await moved.settle(), () => record, save);
    await marking.stamp(signal);
    return summarize(this.name, mapping.host, workloads, signal.aborted);
  }

  async restore(node: NodeRef, ctx: RestoreContext): Promise<void> {
    const { compute, nova } = this.#o;
    const recorded = parseNovaRecord(ctx.record);
    if (!recorded) return restoreUnrecorded(compute, nova, node, ctx, this.#restartOptions(node));
    const rec = await startStopped(this.#o.compute, recorded, ctx, this.#restartOptions(node));
    // and what other maintenances stopped and left marked here (moved here, or their record lost)
    const own = new Set(Object.keys(recorded.migrations).filter((id) => recorded.migrations[id]?.stopped));
    await startMarked(compute, rec.host, own, ctx, this.#restartOptions(node));
    // drainer's resizes no evacuation saw land (an uncordon came during a cold migration, a restart)
    await confirmLeft(compute, rec.migrations, ctx, {
      ...this.#restartOptions(node),
      waitMs: nova.migrationTimeout * 1000,
      host: rec.host,
    });
    if (!rec.disabledByUs) {
      ctx.log.info('nova: nothing to restore (the service was not disabled by drainer)');
      return;
    }
    await compute.init(ctx.signal);
    const services = await compute.listServices(rec.host, ctx.signal);
    const svc = services.find((s) => String(s.id) === String(rec.serviceId)) ?? services[0];
    // the reason this record disabled it under (a newer attempt's reason: that one's to undo)
    const reason = svc?.disabled_reason ?? '';
    const ours =
      svc?.status === 'disabled' &&
      (rec.reason ? reason === rec.reason : reason.startsWith(nova.disabledReasonPrefix));
    if (!svc || !ours) {
      ctx.log.info(
        { host: rec.host, status: svc?.status, reason: svc?.disabled_reason },
        'nova-compute service left alone: no longer disabled by drainer',
      );
    } else if (node.inMaintenance) {
      // kept as this record's, so a restore that comes back to it (another plugin failed) enables it
      return leftDisabled(ctx, rec.host, reason);
    } else if (ctx.dryRun) {
      ctx.log.info({ host: rec.host }, 'dry run: would enable the nova-compute service');
      return;
    } else {
      // still this record's to undo: a guarded write of it first (a newer attempt that took the
      // record over, after a forced restore began, makes it fail) and only then the enable
      await ctx.save(toPluginRecord(rec));
      await compute.enableService(svc, ctx.signal);
      ctx.log.info({ host: rec.host }, 'nova-compute service enabled');
    }
    await ctx.save(toPluginRecord({ ...rec, disabledByUs: false }));
  }

  #restartOptions(node: NodeRef): RestartOptions {
    const { sleep, now, nova } = this.#o;
    const held = node.inMaintenance === true ? { hostInMaintenance: true } : {};
    return { node: node.name, sleep, now, pollMs: nova.pollInterval * 1000, ...held };
  }

  /** No record on the node: the service disabled with drainer's reason is stranded (enabled when in service). */
  stranded(node: NodeRef, opts: StrandedOptions): Promise<StrandedChange | undefined> {
    return novaStranded(this.#o.compute, this.#o.nova, node, opts, this.#restartOptions(node));
  }

  /** The host goes down and logind's time is up: the servers still running there are stopped, marked. */
  atShutdown(node: NodeRef, ctx: ShutdownFallbackContext): Promise<ShutdownFallback> {
    // until logind's deadline (twice the margin the trigger gives): after it the host is down, or
    // the shutdown was called off and the evacuation goes on
    this.#held.set(node.name, this.#o.now() + 2 * ctx.marginMs);
    return stopForShutdown(this.#o.compute, this.#o.nova, node, ctx, this.#o);
  }

  /**
   * The agent stops for good mid-evacuation: live migrations end in Nova by themselves, but a cold
   * one waits in VERIFY_RESIZE for drainer's confirm, which nobody else would give. Each is followed
   * and confirmed as it lands while the stop lasts (ctx.signal); one still moving then is named.
   */
  async leftForGood(node: NodeRef, ctx: LeftForGoodContext): Promise<void> {
    const recorded = parseNovaRecord(ctx.record);
    if (!recorded) return;
    // each request runs to its own timeout: the stop's signal ends the following, not a confirm half-sent
    const calls = { log: ctx.log, signal: new AbortController().signal, dryRun: false };
    await confirmLeft(this.#o.compute, recorded.migrations, calls, {
      ...this.#restartOptions(node),
      waitMs: Infinity,
      host: recorded.host,
      endsWith: { signal: ctx.signal, ended: 'when its agent stopped for good (no successor)' },
    });
  }

  async #mapping(node: NodeRef, prev: NovaRecord | undefined, signal: AbortSignal): Promise<HostMapping> {
    const planned = this.#planned;
    this.#planned = undefined; // one use: a retry looks again
    if (
      planned?.node === node.name &&
      this.#o.now() - planned.at < PLANNED_MAPPING_MS &&
      (!prev || prev.host === planned.mapping.host)
    ) {
      return planned.mapping;
    }
    // A resumed evacuation keeps the host it started on.
    if (prev) {
      const services = await this.#o.compute.listServices(prev.host, signal);
      const svc = services.find((s) => String(s.id) === String(prev.serviceId)) ?? services[0];
      if (svc) return { host: prev.host, service: svc, via: 'hostMapping' };
    }
    return resolveServiceHost(this.#o.compute, node.name, this.#o.nova.hostMapping, signal);
  }

  /**
   * Disable unless someone else already did; the record is saved before the call. A service the
   * plan's lookup showed disabled is read again first: a forced restore may have enabled it since.
   */
  async #disable(
    planned: NovaService,
    ctx: EvacuationContext,
    record: NovaRecord,
    save: (r: NovaRecord) => Promise<void>,
  ): Promise<void> {
    const prefix = this.#o.nova.disabledReasonPrefix;
    const svc = planned.status === 'enabled' ? planned : await this.#fresh(planned, ctx.signal);
    if (svc.status === 'enabled') {
      const reason = `${prefix} ${ctx.trigger} ${new Date(this.#o.now()).toISOString()}`;
      await save({ ...record, disabledByUs: true, reason });
      await this.#o.compute.disableService(svc, reason, ctx.signal);
      ctx.log.info({ host: svc.host, reason }, 'nova-compute service disabled');
      return;
    }
    const reason = svc.disabled_reason ?? null;
    const ours = (reason ?? '').startsWith(prefix);
    if (!ours) {
      ctx.log.info(
        { host: svc.host, reason },
        'nova-compute service already disabled by someone else; leaving it',
      );
    }
    await save({ ...record, disabledByUs: ours, reason });
  }

  /** The service as Nova shows it now (the same one: its id, else the host's first). */
  async #fresh(svc: NovaService, signal: AbortSignal): Promise<NovaService> {
    const now = await this.#o.compute.listServices(svc.host, signal);
    return now.find((s) => String(s.id) === String(svc.id)) ?? now[0] ?? svc;
  }

  async #dryRun(node: NodeRef, signal: AbortSignal): Promise<Outcome> {
    const plan = await this.plan(node, signal);
    const workloads: WorkloadProgress[] = plan.workloads.map((w) => ({
      id: w.id,
      name: w.name,
      state: w.action === 'none' ? 'blocked' : 'pending',
      action: w.action,
      ...(plan.location ? { source: plan.location } : {}),
      attempts: 0,
      ...(w.blocker ? { message: w.blocker } : {}),
      ...(w.presence ? { presence: w.presence } : {}),
    }));
    const blocked = workloads.filter((w) => w.state === 'blocked').length;
    return {
      plugin: this.name,
      succeeded: blocked === 0,
      workloads,
      message: `dry run: ${workloads.length - blocked} server(s) would move, ${blocked} blocked; nothing changed`,
    };
  }
}

function invalidPolicy(lines: readonly string[]): PlanBlocker {
  return {
    kind: 'invalid-policy',
    message:
      `nova: ${lines.length} server(s) name a way out drainer does not know: ${lines.join('; ')}; ` +
      `set ${MAINTENANCE_KEY} to one of ${WAYS.join(', ')} or remove it`,
  };
}

/** Node mode manual: drainer moves nothing; someone else empties the host while the gate holds. */
function manualWorkload(s: NovaServer, node: string): PlannedWorkload {
  return {
    id: s.id,
    name: s.name,
    owner: s.tenant_id ?? '',
    state: taskStateOf(s) ? `${s.status} (${taskStateOf(s)})` : s.status,
    ...presenceField(novaPresence(s.status)),
    action: 'external',
    why: `node ${node} ${MIGRATION_MODE_KEY}=manual: moved by someone else; the drain waits until the host is empty`,
  };
}

function summarize(plugin: string, host: string, workloads: WorkloadProgress[], cancelled: boolean): Outcome {
  const count = (s: WorkloadProgress['state']) => workloads.filter((w) => w.state === s).length;
  const moved = count('succeeded');
  const notMoved = workloads.filter((w) => w.state !== 'succeeded' && w.state !== 'skipped');
  const parts = [`${moved} of ${workloads.length - count('skipped')} server(s) moved`];
  if (count('failed')) parts.push(`${count('failed')} failed`);
  if (count('blocked')) parts.push(`${count('blocked')} blocked`);
  if (count('migrating') + count('pending'))
    parts.push(`${count('migrating') + count('pending')} unfinished`);
  if (cancelled) parts.push('cancelled');
  // every server still on the host, by name and why (a stopped or skipped one stays by choice)
  const stays = workloads.filter(progressOnHost);
  const staying = stays.map((w) => `${w.name} (${w.state}${w.message ? `: ${w.message}` : ''})`);
  const text = staying.length ? `${parts.join(', ')}; on ${host}: ${staying.join('; ')}` : parts.join(', ');
  return { plugin, succeeded: notMoved.length === 0, workloads, message: text };
}
