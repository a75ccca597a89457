// The soak's schedule: one fault per round, drawn from a seeded PRNG over a fixed fleet, and the
// kind of drain the round starts (on a node with VMs, chosen when the round runs). Each step is
// self-contained (a killed agent comes back within its own step, a fault window closes by itself),
// so any sub-list of a schedule is a valid schedule: the shrinker drops steps freely.
import { DRAIN_KINDS, type DrainKind } from './drains.ts';
import { OWNER_ACTIONS, type OwnerActionKind } from './owners.ts';
import { prng } from './prng.ts';

/** One round: its fault (or operator's or owner's act) and the kind of drain it starts, if one can. */
export type Step = Fault & { drain?: DrainKind };

type Fault =
  | { kind: 'cordon' | 'uncordon'; node: string }
  | { kind: 'maintenance-create' | 'maintenance-delete'; node: string }
  | { kind: 'taint' | 'untaint'; node: string }
  | { kind: 'kubectl-drain'; node: string }
  /** kill -9: the agent's connections die with it and it cleans nothing up; a new container of the same pod starts after downMs. */
  | { kind: 'agent-kill'; node: string; downMs: number }
  /** A DaemonSet rollout: a new pod (a new instance) starts beside the old one, which is stopped (SIGTERM) overlapMs later. */
  | { kind: 'agent-rollout'; node: string; overlapMs: number }
  /** The API server goes away (connections reset, new ones refused) for downMs; its watch cache starts afresh. */
  | { kind: 'api-restart'; downMs: number }
  /** Every open connection to the API server is reset at once. */
  | { kind: 'api-drop' }
  | { kind: 'api-errors'; status: 500 | 503; forMs: number }
  | { kind: 'nova-errors'; rate: number; forMs: number }
  /** Every Nova answer takes latencyMs (simulated) longer for forMs (real). */
  | { kind: 'nova-slow'; latencyMs: number; forMs: number }
  | { kind: 'gate-pod-delete' | 'gate-pdb-delete'; node: string }
  /**
   * The Node deleted and registered again (a kubelet re-installed, Karpenter or Cluster API after its
   * drain) the moment a node reaches `at`: a phase of its record, right after drainer stopped a server
   * on it, or at once (any).
   */
  | { kind: 'node-recreate'; node: string; at: RecreateAt }
  /** `kubectl label node N drainer.dev/agent=disabled`: the DaemonSet takes its agent off (SIGTERM). */
  | { kind: 'agent-off'; node: string }
  /** `kubectl label node N drainer.dev/agent-`: the DaemonSet runs an agent there again. */
  | { kind: 'agent-on'; node: string }
  /**
   * A server drainer stopped is moved by its owner (a resize: Nova's scheduler picks an enabled host),
   * and the host it landed on goes into maintenance for holdMs (cordon, then uncordon).
   */
  | { kind: 'stopped-onto-maintenance'; holdMs: number }
  /** A VMI on a node under evacuation is deleted and made again under its name (its VM restarted, or its controller's doing). */
  | { kind: 'vmi-recreate' }
  /**
   * KubeVirt's migration queue full (parallelMigrationsPerCluster: 1) for forMs, while a migration in
   * flight fails (its target pod removed): KubeVirt retries it with backoff behind the others.
   */
  | { kind: 'kubevirt-queue'; forMs: number }
  /** The node's agents' clock runs skewSeconds off from now on (0: back to true time). */
  | { kind: 'clock-skew'; node: string; skewSeconds: number }
  /** `drainer release` of a node in maintenance (this one, or the next in fleet order that is). */
  | { kind: 'release'; node: string; force: boolean }
  /** `drainer restore --force` of a node in maintenance (as release picks it). */
  | { kind: 'restore-force'; node: string }
  /** `drainer start --node X --now`, and again a moment later (the node already Evacuating). */
  | { kind: 'start-now-twice'; node: string }
  /** drainer's DaemonSet deleted with --cascade=orphan, applied again gapMs later. */
  | { kind: 'daemonset-recreate'; gapMs: number }
  /** An owner acts on one of its servers (one on a node under evacuation, when there is one). */
  | { kind: 'owner'; action: OwnerActionKind };

export type StepKind = Fault['kind'];

/** When a node-recreate deletes the Node: at once, in a phase of its record, or right after a stop. */
export const RECREATE_AT = [
  'any',
  'Queued',
  'Evacuating',
  'Evacuated',
  'Failed',
  'Restoring',
  'stopped',
] as const;
export type RecreateAt = (typeof RECREATE_AT)[number];

/** How often each kind is drawn (relative). Triggers flap most, so evacuations keep starting. */
export const WEIGHTS: Readonly<Record<StepKind, number>> = {
  cordon: 10,
  uncordon: 12,
  'maintenance-create': 5,
  'maintenance-delete': 6,
  taint: 4,
  untaint: 5,
  'kubectl-drain': 4,
  'agent-kill': 6,
  'agent-rollout': 4,
  'api-restart': 3,
  'api-drop': 4,
  'api-errors': 4,
  'nova-errors': 5,
  'nova-slow': 4,
  'gate-pod-delete': 4,
  'gate-pdb-delete': 3,
  'node-recreate': 4,
  'agent-off': 2,
  'agent-on': 3,
  'stopped-onto-maintenance': 2,
  'vmi-recreate': 2,
  'kubevirt-queue': 2,
  'clock-skew': 3,
  release: 4,
  'restore-force': 2,
  'start-now-twice': 3,
  'daemonset-recreate': 2,
  owner: 14,
};

export const STEP_KINDS = Object.keys(WEIGHTS) as StepKind[];

function drawKind(r: ReturnType<typeof prng>, without: ReadonlySet<StepKind>): StepKind {
  const weight = (k: StepKind) => (without.has(k) ? 0 : WEIGHTS[k]);
  const total = STEP_KINDS.reduce((s, k) => s + weight(k), 0);
  let x = r.next() * total;
  for (const k of STEP_KINDS) {
    x -= weight(k);
    if (x < 0) return k;
  }
  return STEP_KINDS.findLast((k) => !without.has(k)) as StepKind;
}

/** What takes a node out of service, and what puts it back. */
const RELEASE: Partial<Record<StepKind, StepKind>> = {
  cordon: 'uncordon',
  'kubectl-drain': 'uncordon',
  'start-now-twice': 'uncordon',
  'maintenance-create': 'maintenance-delete',
  taint: 'untaint',
};
/** Past this many nodes taken out, a step that takes one more puts one back instead: evacuations keep happening. */
const MAX_OUT = 3;

/** The triggers the schedule has set, per node (a model of its own steps, not of the cluster). */
type Out = Map<string, Set<StepKind>>;

/** The schedule's model of its own steps: triggers set per node, and the nodes whose agent it took off. */
interface Model {
  readonly out: Out;
  readonly off: Set<string>;
}

function drawStep(
  r: ReturnType<typeof prng>,
  nodes: readonly string[],
  model: Model,
  without: ReadonlySet<StepKind>,
): Step {
  const fault = drawFault(r, nodes, model, without);
  return { ...fault, drain: r.pick(DRAIN_KINDS) };
}

function drawFault(
  r: ReturnType<typeof prng>,
  nodes: readonly string[],
  { out, off }: Model,
  without: ReadonlySet<StepKind>,
): Fault {
  let kind = drawKind(r, without);
  let node = r.pick(nodes);
  // an agent put back where the schedule took one off (else on the drawn node: nothing to do)
  if (kind === 'agent-on' && off.size) node = r.pick([...off].sort());
  if (kind === 'agent-on') off.delete(node);
  if (kind === 'agent-off') off.add(node);
  const release = RELEASE[kind];
  if (release && !out.has(node) && out.size >= MAX_OUT) {
    node = r.pick([...out.keys()].sort());
    kind = RELEASE[r.pick([...(out.get(node) ?? [])].sort())] ?? release;
  }
  const set = out.get(node) ?? new Set<StepKind>();
  if (RELEASE[kind]) set.add(kind === 'kubectl-drain' || kind === 'start-now-twice' ? 'cordon' : kind);
  for (const [take, put] of Object.entries(RELEASE)) if (put === kind) set.delete(take as StepKind);
  if (set.size) out.set(node, set);
  else out.delete(node);
  return faultOf(kind, node, r);
}

/** The fault of a kind on a node, with its own draws (durations, rates, when). */
function faultOf(kind: StepKind, node: string, r: ReturnType<typeof prng>): Fault {
  switch (kind) {
    case 'agent-kill':
      return { kind, node, downMs: r.between(2, 30) * 100 };
    case 'agent-rollout':
      return { kind, node, overlapMs: r.between(1, 20) * 100 };
    case 'api-restart':
      return { kind, downMs: r.between(2, 20) * 100 };
    case 'api-drop':
      return { kind };
    case 'api-errors':
      return { kind, status: r.pick([500, 503] as const), forMs: r.between(2, 15) * 100 };
    case 'nova-errors':
      return { kind, rate: r.pick([0.2, 0.5, 1]), forMs: r.between(2, 20) * 100 };
    case 'nova-slow':
      return { kind, latencyMs: r.pick([2000, 5000, 10_000]), forMs: r.between(2, 20) * 100 };
    case 'clock-skew':
      return { kind, node, skewSeconds: r.pick([-60, 0, 60]) };
    case 'release':
      return { kind, node, force: r.chance(0.5) };
    case 'daemonset-recreate':
      return { kind, gapMs: r.between(1, 10) * 100 };
    case 'node-recreate':
      return { kind, node, at: r.pick(RECREATE_AT) };
    case 'stopped-onto-maintenance':
      return { kind, holdMs: r.between(20, 80) * 100 };
    case 'vmi-recreate':
      return { kind };
    case 'kubevirt-queue':
      return { kind, forMs: r.between(5, 20) * 100 };
    case 'owner':
      return { kind, action: r.pick(OWNER_ACTIONS) };
    default:
      return { kind, node };
  }
}

/**
 * The schedule of a soak: `rounds` steps over `nodes`, the same for the same seed. `without`: kinds
 * never drawn (to see what else a seed finds while one cause is known and not yet fixed).
 */
export function makeSchedule(
  seed: number,
  rounds: number,
  nodes: readonly string[],
  without: ReadonlySet<StepKind> = new Set(),
): Step[] {
  const r = prng(seed);
  const model: Model = { out: new Map(), off: new Set() };
  return Array.from({ length: rounds }, () => drawStep(r, nodes, model, without));
}

/** One line per step, as a failure prints it. */
export function describeStep(s: Step): string {
  return s.drain ? `${describeFault(s)} + drain ${s.drain}` : describeFault(s);
}

function describeFault(s: Fault): string {
  switch (s.kind) {
    case 'agent-kill':
      return `agent-kill ${s.node} down=${s.downMs}ms`;
    case 'agent-rollout':
      return `agent-rollout ${s.node} overlap=${s.overlapMs}ms`;
    case 'api-restart':
      return `api-restart down=${s.downMs}ms`;
    case 'api-drop':
      return 'api-drop';
    case 'api-errors':
      return `api-errors ${s.status} for=${s.forMs}ms`;
    case 'nova-errors':
      return `nova-errors rate=${s.rate} for=${s.forMs}ms`;
    case 'nova-slow':
      return `nova-slow latency=${s.latencyMs}ms for=${s.forMs}ms`;
    case 'clock-skew':
      return `clock-skew ${s.node} ${s.skewSeconds}s`;
    case 'release':
      return `release ${s.node}${s.force ? ' --force' : ''}`;
    case 'daemonset-recreate':
      return `daemonset-recreate gap=${s.gapMs}ms`;
    case 'owner':
      return `owner ${s.action}`;
    case 'node-recreate':
      return `node-recreate ${s.node} at=${s.at}`;
    case 'stopped-onto-maintenance':
      return `stopped-onto-maintenance hold=${s.holdMs}ms`;
    case 'vmi-recreate':
      return 'vmi-recreate';
    case 'kubevirt-queue':
      return `kubevirt-queue for=${s.forMs}ms`;
    default:
      return `${s.kind} ${s.node}`;
  }
}

/** Faults injected by kind (every kind listed, 0 where none). */
export function countByKind(steps: readonly Step[]): Record<StepKind, number> {
  const out = Object.fromEntries(STEP_KINDS.map((k) => [k, 0])) as Record<StepKind, number>;
  for (const s of steps) out[s.kind]++;
  return out;
}
