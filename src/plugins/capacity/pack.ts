// First-fit-decreasing packing of the workloads that must move into the room the other hosts
// have left. Pure: the backends turn their APIs into items and bins, this answers where each goes
// (or why it goes nowhere). An estimate, like the scheduler's own filters, not a reservation.

/** Amounts per resource class (nova: VCPU, MEMORY_MB, DISK_GB; kubevirt: cpu millicores, memory bytes). */
export type Amounts = Readonly<Record<string, number>>;

export interface Item {
  readonly id: string;
  readonly name: string;
  readonly needs: Amounts;
  /** Only bins of this zone (nova: a server pinned to an availability zone). */
  readonly zone?: string;
  /** Bins the item may use at all (kubevirt: taints, nodeSelector); undefined = every bin. */
  readonly allowed?: (bin: Bin) => boolean;
  /** Anti-affinity group: at most one member per bin, and none where a member already is. */
  readonly antiAffinity?: string;
}

export interface Bin {
  readonly name: string;
  readonly free: Amounts;
  /** The largest single amount one workload may take per class (Placement's max_unit). */
  readonly maxUnit?: Amounts;
  readonly zone?: string;
  /** Anti-affinity groups with a member on this bin already. */
  readonly groups?: readonly string[];
}

export type Unplaced =
  | { readonly item: Item; readonly why: 'no-host' }
  | { readonly item: Item; readonly why: 'zone'; readonly zone: string }
  | { readonly item: Item; readonly why: 'excluded' }
  | { readonly item: Item; readonly why: 'anti-affinity'; readonly group: string }
  | {
      readonly item: Item;
      readonly why: 'max-unit';
      readonly classes: readonly string[];
      /** Per class: the largest max_unit of the usable hosts (the most any host takes for one). */
      readonly largest: Amounts;
    }
  | {
      readonly item: Item;
      readonly why: 'room';
      readonly classes: readonly string[];
      /** Per lacking class: the most that one usable host has free (what the largest can take). */
      readonly largest: Amounts;
    };

export interface Packing {
  readonly placed: readonly { readonly item: Item; readonly bin: string }[];
  readonly unplaced: readonly Unplaced[];
  /** Per class: how much the unplaced items need beyond what is left free everywhere (> 0 only). */
  readonly shortInTotal: Amounts;
}

interface OpenBin {
  readonly bin: Bin;
  readonly free: Record<string, number>;
  readonly groups: Set<string>;
}

/** Bigger first: the item's largest share of the room all bins have together, then its name. */
function bySize(items: readonly Item[], bins: readonly Bin[]): Item[] {
  const total: Record<string, number> = {};
  for (const b of bins)
    for (const [k, v] of Object.entries(b.free)) total[k] = (total[k] ?? 0) + Math.max(0, v);
  const size = (i: Item) =>
    Math.max(0, ...Object.entries(i.needs).map(([k, v]) => (total[k] ? v / total[k] : v > 0 ? Infinity : 0)));
  return [...items].sort((a, b) => size(b) - size(a) || a.name.localeCompare(b.name));
}

const needed = (i: Item) => Object.entries(i.needs).filter(([, v]) => v > 0);

function tooBig(i: Item, b: Bin): string[] {
  return needed(i)
    .filter(([k, v]) => b.maxUnit?.[k] !== undefined && v > b.maxUnit[k])
    .map(([k]) => k);
}

function lacking(i: Item, b: OpenBin): string[] {
  return needed(i)
    .filter(([k, v]) => v > (b.free[k] ?? 0))
    .map(([k]) => k);
}

/** Why no bin took the item, from the strictest filter that left none. */
function reason(item: Item, bins: readonly OpenBin[]): Unplaced {
  let left = bins;
  if (!left.length) return { item, why: 'no-host' };
  if (item.zone !== undefined) {
    left = left.filter((b) => b.bin.zone === item.zone);
    if (!left.length) return { item, why: 'zone', zone: item.zone };
  }
  if (item.allowed) {
    left = left.filter((b) => item.allowed!(b.bin));
    if (!left.length) return { item, why: 'excluded' };
  }
  const group = item.antiAffinity;
  if (group !== undefined) {
    left = left.filter((b) => !b.groups.has(group));
    if (!left.length) return { item, why: 'anti-affinity', group };
  }
  const fitting = left.filter((b) => tooBig(item, b.bin).length === 0);
  if (!fitting.length) {
    const classes = tooBig(item, left[0]!.bin);
    const most = (k: string) => Math.max(0, ...left.map((b) => b.bin.maxUnit?.[k] ?? 0));
    return { item, why: 'max-unit', classes, largest: Object.fromEntries(classes.map((k) => [k, most(k)])) };
  }
  // the classes no single host has enough of
  const classes = needed(item)
    .filter(([k, v]) => fitting.every((b) => (b.free[k] ?? 0) < v))
    .map(([k]) => k);
  const lack = classes.length ? classes : lacking(item, fitting[0]!);
  const largest = Object.fromEntries(
    lack.map((k) => [k, Math.max(0, ...fitting.map((b) => b.free[k] ?? 0))]),
  );
  return { item, why: 'room', classes: lack, largest };
}

export function pack(items: readonly Item[], bins: readonly Bin[]): Packing {
  const open: OpenBin[] = bins.map((bin) => ({ bin, free: { ...bin.free }, groups: new Set(bin.groups) }));
  const placed: { item: Item; bin: string }[] = [];
  const unplaced: Unplaced[] = [];
  for (const item of bySize(items, bins)) {
    const target = open.find(
      (b) =>
        (item.zone === undefined || b.bin.zone === item.zone) &&
        (item.allowed?.(b.bin) ?? true) &&
        (item.antiAffinity === undefined || !b.groups.has(item.antiAffinity)) &&
        tooBig(item, b.bin).length === 0 &&
        lacking(item, b).length === 0,
    );
    if (!target) {
      unplaced.push(reason(item, open));
      continue;
    }
    for (const [k, v] of needed(item)) target.free[k] = (target.free[k] ?? 0) - v;
    if (item.antiAffinity !== undefined) target.groups.add(item.antiAffinity);
    placed.push({ item, bin: target.bin.name });
  }
  const shortInTotal: Record<string, number> = {};
  for (const u of unplaced) for (const [k, v] of needed(u.item)) shortInTotal[k] = (shortInTotal[k] ?? 0) + v;
  for (const k of Object.keys(shortInTotal)) {
    const free = open.reduce((a, b) => a + Math.max(0, b.free[k] ?? 0), 0);
    const short = shortInTotal[k]! - free;
    if (short > 0) shortInTotal[k] = short;
    else delete shortInTotal[k];
  }
  return { placed, unplaced, shortInTotal };
}
