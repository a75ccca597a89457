// Live progress: on a terminal, one line per server/VMI and a bar for the pods, redrawn in place;
// elsewhere (pipes, CI logs) one plain line per change. The phase line names the fleet slot.
import type { OutStream } from '../output/stream.ts';
import { copyText } from '../core/backends/copy-text.ts';
import type { PodProgress, Snapshot, TrackedItem } from './tracker.ts';

export interface ProgressView {
  update(s: Snapshot): void;
  /** Leaves the last picture on screen; later output goes below it. */
  done(): void;
}

export const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** Simulated seconds the item has taken so far (or took). */
export const took = (item: TrackedItem, now: number): string =>
  item.startedAt === undefined ? '' : secs(Math.max(0, (item.endedAt ?? now) - item.startedAt));

/** The item's state in words; a move that drainer forced to complete says so. */
export const stateText = (item: Pick<TrackedItem, 'state' | 'forced'>): string =>
  item.state === 'moved' && item.forced ? 'moved (forced)' : item.state;

/** Where from and where to, as far as known. */
export function route(item: TrackedItem): string {
  if (item.state === 'moved') return `${item.source} → ${item.target ?? '?'}`;
  if (item.state === 'migrating' || item.state === 'retrying')
    return `${item.source} → ${item.target ?? '…'}`;
  return item.source;
}

/** A migrating server's copy as drainer last read it (long migrations only): " 62 % (…)". */
export function copyNote(s: Snapshot, item: TrackedItem): string {
  if (item.kind !== 'nova' || item.state !== 'migrating') return '';
  const c = s.record?.progress?.nova?.copies?.find((x) => x.name === item.name);
  return c ? ` ${copyText(c)}` : '';
}

function itemLine(item: TrackedItem, now: number, nameWidth: number, routeWidth: number, copy = ''): string {
  const attempt = item.attempts > 1 ? `  (attempt ${item.attempts})` : '';
  return [
    '  ',
    item.kind.padEnd(9),
    item.name.padEnd(nameWidth),
    '  ',
    stateText(item).padEnd(15),
    route(item).padEnd(routeWidth),
    '  ',
    took(item, now).padStart(7),
    attempt,
    copy ? ` ${copy}` : '',
  ].join('');
}

export function podBar(p: PodProgress, width = 24): string {
  const filled = p.total === 0 ? width : Math.round((p.evicted / p.total) * width);
  const terminating = p.terminating > 0 ? ` (${p.terminating} terminating)` : '';
  return `  pods     [${'█'.repeat(filled)}${'░'.repeat(width - filled)}]  ${p.evicted}/${p.total} evicted${terminating}`;
}

/** The fleet slot beside the phase: the one this node holds, or while Queued who holds them. */
export function slotNote(s: Snapshot): string {
  if (s.phase === 'Queued') {
    if (s.record?.waiting) return ` (${s.record.waiting.reason})`;
    const by = s.holders.map((h) => `${h.slot} held by ${h.node}`).join(', ');
    return ` (${by || 'waiting for a slot'})`;
  }
  return s.record?.slot ? ` (holds ${s.record.slot})` : '';
}

/** The node's lines; the columns fit `aligned` (default its own items; several nodes share theirs). */
export function frame(
  s: Snapshot,
  node: string,
  startedAt: number,
  aligned: readonly TrackedItem[] = s.items,
): string[] {
  const nameWidth = Math.max(4, ...aligned.map((i) => i.name.length));
  const routeWidth = Math.max(...aligned.map((i) => route(i).length), 0);
  return [
    `${node}: ${s.phase}${slotNote(s)}  ${secs(s.now - startedAt)}`,
    ...s.items.map((i) => itemLine(i, s.now, nameWidth, routeWidth, copyNote(s, i))),
    // a node without pods to drain gets no bar
    ...(s.pods.total > 0 ? [podBar(s.pods)] : []),
  ];
}

/** Draws lines in place of the last ones (cursor up, clear line), cut to the terminal width. */
function screen(out: OutStream): { draw(lines: readonly string[]): void; done(): void } {
  let drawn = 0;
  let last = '';
  return {
    draw(all) {
      const cols = out.columns ?? 120;
      const lines = all.map((l) => (l.length > cols - 1 ? l.slice(0, cols - 1) : l));
      const text = lines.join('\n');
      if (text === last) return;
      last = text;
      const up = drawn > 0 ? `\x1b[${drawn}A\r` : '';
      out.write(up + lines.map((l) => `\x1b[2K${l}\n`).join(''));
      drawn = lines.length;
    },
    done() {
      drawn = 0;
    },
  };
}

/** Redraws the frame in place; only when something changed. */
export function ttyView(out: OutStream, node: string, startedAt: number): ProgressView {
  const tty = screen(out);
  return { update: (s) => tty.draw(frame(s, node, startedAt)), done: () => tty.done() };
}

/** One line per change: the phase, an item's state or target, the pod count. */
export function plainView(out: OutStream, node: string, startedAt: number): ProgressView {
  const seen = new Map<string, string>();
  const say = (key: string, value: string, line: string) => {
    if (seen.get(key) === value) return;
    seen.set(key, value);
    out.write(line + '\n');
  };
  return {
    update(s) {
      const at = `[${secs(s.now - startedAt).padStart(8)}]`;
      const phase = `${s.phase}${slotNote(s)}`;
      say('phase', phase, `${at} ${node}: ${phase}`);
      for (const i of s.items) {
        const when = i.state === 'moved' ? ` in ${took(i, s.now)}` : '';
        const attempt = i.attempts > 1 ? ` (attempt ${i.attempts})` : '';
        const copy = copyNote(s, i);
        say(
          `${i.kind}/${i.id}`,
          `${stateText(i)}/${i.target ?? ''}/${i.attempts}${copy}`,
          `${at} ${i.kind} ${i.name}: ${stateText(i)}${copy} ${route(i)}${when}${attempt}`,
        );
      }
      if (s.pods.total === 0) return;
      const terminating = s.pods.terminating > 0 ? `, ${s.pods.terminating} terminating` : '';
      say(
        'pods',
        `${s.pods.evicted}/${s.pods.terminating}`,
        `${at} pods: ${s.pods.evicted}/${s.pods.total} evicted${terminating}`,
      );
    },
    done() {},
  };
}

/** Several nodes at once (the fleet act): their frames one below the other, or their plain lines. */
export interface FleetView {
  update(snapshots: ReadonlyMap<string, Snapshot>): void;
  done(): void;
}

export function fleetView(out: OutStream, nodes: readonly string[], startedAt: number): FleetView {
  if (out.isTTY) {
    const tty = screen(out);
    return {
      update(m) {
        const all = [...m.values()].flatMap((s) => s.items);
        tty.draw(
          nodes.flatMap((n) => {
            const s = m.get(n);
            return s ? frame(s, n, startedAt, all) : [];
          }),
        );
      },
      done: () => tty.done(),
    };
  }
  const views = new Map(nodes.map((n) => [n, plainView(out, n, startedAt)]));
  return {
    update(m) {
      for (const [n, view] of views) {
        const s = m.get(n);
        if (s) view.update(s);
      }
    },
    done() {},
  };
}
