// Every metric in design.md §4, on the process's own Registry (never prom-client's global one, so
// tests and several agents in one process don't collide), plus the default process metrics.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type ApiName = 'keystone' | 'nova' | 'placement' | 'kubernetes';
/** Called once per HTTP request an API client makes; code is the status ("200") or an error code ("ECONNRESET"). */
export type ApiRequestHook = (api: ApiName, code: string) => void;

export const NODE_PHASES = ['InService', 'Queued', 'Evacuating', 'Evacuated', 'Failed', 'Restoring'] as const;

const DURATION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200];

export class Metrics {
  readonly registry: Registry;
  readonly evacuations: Counter<'result'>;
  readonly evacuationDuration: Histogram;
  readonly evacuationQueue: Histogram;
  readonly fleetSlots: Gauge<'state'>;
  readonly fleetWindowOpen: Gauge;
  readonly fleetFreezeActive: Gauge;
  readonly fleetBlocker: Gauge<'blocker'>;
  readonly fleetWaiting: Gauge<'kind'>;
  readonly prometheusQueries: Counter;
  readonly migrations: Counter<'plugin' | 'result'>;
  readonly migrationDuration: Histogram<'plugin'>;
  /** Added to §4: migrations a plugin started (each attempt once), for started vs finished. */
  readonly migrationsStarted: Counter<'plugin'>;
  readonly migrationsInFlight: Gauge<'plugin'>;
  readonly migrationsNotConverging: Gauge<'plugin'>;
  readonly migrationStalls: Counter<'plugin' | 'action'>;
  readonly migrationMemoryRemaining: Gauge<'plugin'>;
  /** Memory of the VMs still on the node, when it last fell, and the alert's time from the config. */
  readonly evacuationMemoryLeft: Gauge<'plugin'>;
  readonly evacuationMemoryFell: Gauge<'plugin'>;
  readonly evacuationMemoryAlertAfter: Gauge;
  /** Workloads whose owner is asked to move them (way out notify), waiting for the owner now. */
  readonly workloadsAwaitingOwner: Gauge<'plugin'>;
  /** Added to §4: the VMs on the node's host (state running|stopped), as the last plan or progress report counted them. */
  readonly nodeVms: Gauge<'plugin' | 'state'>;
  readonly evictions: Counter<'code'>;
  readonly nodePhase: Gauge<'phase'>;
  readonly recordUnreadable: Gauge;
  readonly apiRequests: Counter<'api' | 'code'>;
  /** Added to §4: a plugin call that threw (the host turns it into a failed Outcome). */
  readonly pluginErrors: Counter<'plugin' | 'operation'>;
  /**
   * Added to §4: 1 while a plugin's last restore on this node failed, so something drainer changed
   * (a disabled nova-compute service, a drain taint) is still in place on a node meant to be back in service.
   */
  readonly restoreFailed: Gauge<'plugin'>;
  readonly drainGateHeld: Gauge;
  readonly drainGateNotHeld: Gauge;
  readonly cloudAuthOk: Gauge<'plugin'>;
  /** Pass this to API clients (Nova, Kubernetes) as their request hook. */
  readonly apiRequest: ApiRequestHook;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    const registers = [(this.registry = new Registry())];
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    this.evacuations = new Counter({
      name: 'drainer_evacuations_total',
      help: 'Evacuations of this node that finished, by result (succeeded, failed, cancelled)',
      labelNames: ['result'],
      registers,
    });
    this.evacuationDuration = new Histogram({
      name: 'drainer_evacuation_duration_seconds',
      help: 'Time from the start of an evacuation to its end',
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.migrations = new Counter({
      name: 'drainer_migrations_total',
      help: 'Workload migrations that finished, by plugin and result',
      labelNames: ['plugin', 'result'],
      registers,
    });
    this.migrationDuration = new Histogram({
      name: 'drainer_migration_duration_seconds',
      help: 'Duration of one workload migration',
      labelNames: ['plugin'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.migrationsStarted = new Counter({
      name: 'drainer_migrations_started_total',
      help: 'Workload migrations started (each attempt counts once), by plugin',
      labelNames: ['plugin'],
      registers,
    });
    this.migrationsInFlight = new Gauge({
      name: 'drainer_migrations_in_flight',
      help: 'Workload migrations running now',
      labelNames: ['plugin'],
      registers,
    });
    this.migrationsNotConverging = new Gauge({
      name: 'drainer_migrations_not_converging',
      help: 'Live migrations in flight whose memory left has stopped falling (stalled)',
      labelNames: ['plugin'],
      registers,
    });
    this.migrationStalls = new Counter({
      name: 'drainer_migration_stalls_total',
      help: 'Stalled live migrations, by what was done (force-complete, abort, wait)',
      labelNames: ['plugin', 'action'],
      registers,
    });
    this.migrationMemoryRemaining = new Gauge({
      name: 'drainer_migration_memory_remaining_bytes',
      help: 'Memory still to copy, summed over the live migrations whose progress was read',
      labelNames: ['plugin'],
      registers,
    });
    this.evacuationMemoryLeft = new Gauge({
      name: 'drainer_evacuation_memory_left_bytes',
      help: 'Memory of the VMs still on this node while it is evacuated (0 when no evacuation runs)',
      labelNames: ['plugin'],
      registers,
    });
    this.evacuationMemoryFell = new Gauge({
      name: 'drainer_evacuation_memory_left_fell_timestamp_seconds',
      help: 'When the memory left to move last went down (epoch seconds; the start of the evacuation at first; kept fresh while drainer only waits for owners to move their VMs)',
      labelNames: ['plugin'],
      registers,
    });
    this.evacuationMemoryAlertAfter = new Gauge({
      name: 'drainer_evacuation_memory_alert_after_seconds',
      help: 'evacuation.memoryAlertAfter: DrainerEvacuationMemoryNotFalling fires when the memory left has not gone down for this long',
      registers,
    });
    this.workloadsAwaitingOwner = new Gauge({
      name: 'drainer_workloads_awaiting_owner',
      help: 'VMs whose owner is asked to move them (way out notify) and has not yet; each takes the default way after its timeout',
      labelNames: ['plugin'],
      registers,
    });
    this.nodeVms = new Gauge({
      name: 'drainer_node_vms',
      help: "VMs on this node's host, stopped ones too (state running|stopped), as drainer's last plan or progress report of the node counted them: the count drainer status, plan and release give",
      labelNames: ['plugin', 'state'],
      registers,
    });
    this.evictions = new Counter({
      name: 'drainer_evictions_total',
      help: 'Pod eviction requests, by HTTP status code',
      labelNames: ['code'],
      registers,
    });
    this.evacuationQueue = new Histogram({
      name: 'drainer_evacuation_queue_seconds',
      help: 'Time a node waited for a fleet evacuation slot',
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.fleetSlots = new Gauge({
      name: 'drainer_fleet_slots',
      help: 'Fleet evacuation slots as this agent last saw them, taken or free',
      labelNames: ['state'],
      registers,
    });
    this.fleetWindowOpen = new Gauge({
      name: 'drainer_fleet_window_open',
      help: 'Whether a maintenance window is open now (1; also with no windows configured) or not (0)',
      registers,
    });
    this.fleetFreezeActive = new Gauge({
      name: 'drainer_fleet_freeze_active',
      help: 'Freeze periods active now',
      registers,
    });
    this.fleetBlocker = new Gauge({
      name: 'drainer_fleet_blocker_holding',
      help: 'Per configured blocker (prometheus, pods): 1 while it holds starts (firing or cannot be evaluated), as this agent last saw it',
      labelNames: ['blocker'],
      registers,
    });
    this.fleetWaiting = new Gauge({
      name: 'drainer_fleet_waiting',
      help: 'Whether this node waits to start, by what holds it (window, freeze, prometheus, pods)',
      labelNames: ['kind'],
      registers,
    });
    this.prometheusQueries = new Counter({
      name: 'drainer_fleet_prometheus_queries_total',
      help: 'Prometheus alert queries this agent made for the fleet (at most one per blockers.interval, fleet-wide)',
      registers,
    });
    this.nodePhase = new Gauge({
      name: 'drainer_node_phase',
      help: 'The phase of this node (1 for the current phase, 0 for the others)',
      labelNames: ['phase'],
      registers,
    });
    this.apiRequests = new Counter({
      name: 'drainer_api_requests_total',
      help: 'Requests to the OpenStack and Kubernetes APIs, by API and status code',
      labelNames: ['api', 'code'],
      registers,
    });
    this.pluginErrors = new Counter({
      name: 'drainer_plugin_errors_total',
      help: 'Plugin calls that threw instead of returning, by plugin and operation',
      labelNames: ['plugin', 'operation'],
      registers,
    });
    this.restoreFailed = new Gauge({
      name: 'drainer_restore_failed',
      help: "1 while the plugin's last restore of this node failed: a change of drainer's (e.g. a disabled nova-compute service) is still in place",
      labelNames: ['plugin'],
      registers,
    });
    this.recordUnreadable = new Gauge({
      name: 'drainer_record_unreadable',
      help: "1 while this node's drainer.dev/state record cannot be read by this version (bad JSON, unknown phase, newer schema): the agent leaves the node alone",
      registers,
    });
    this.drainGateHeld = new Gauge({
      name: 'drainer_drain_gate_held',
      help: "1 while this node's drain gate holds, as the API server shows it (PDB observed with no disruption allowed, gate pod Running and Ready); 0 otherwise",
      registers,
    });
    this.drainGateNotHeld = new Gauge({
      name: 'drainer_drain_gate_not_held',
      help: "1 while this node's drain gate should hold and does not (gate pod missing, Pending, failing or being deleted; PDB missing or altered): drains of the node are not held",
      registers,
    });
    this.cloudAuthOk = new Gauge({
      name: 'drainer_cloud_auth_ok',
      help: "1 while the plugin's cloud accepts drainer's credentials, 0 once it rejected them (checked at start and each resync)",
      labelNames: ['plugin'],
      registers,
    });
    this.apiRequest = (api, code) => this.apiRequests.inc({ api, code });
    this.setPhase('InService');
  }

  /** Exactly one phase reads 1. */
  setPhase(phase: (typeof NODE_PHASES)[number]): void {
    for (const p of NODE_PHASES) this.nodePhase.set({ phase: p }, p === phase ? 1 : 0);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
