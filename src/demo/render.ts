// Live progress: on a terminal, one line per server/VMI and a bar for the pods, redrawn in place;
// elsewhere (pipes, CI logs) one plain line per change.
import type { OutStream } from '../cli/context.ts';
import type { ItemState, PodProgress, Snapshot, TrackedItem } from './tracker.ts';

export interface ProgressView {
  update(s: Snapshot): void;
  /** Leaves the last picture on screen; later output goes below it. */
  done(): void;
}

const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** Simulated seconds the item has taken so far (or took). */
export const took = (item: TrackedItem, now: number): string =>
  item.startedAt === undefined ? '' : secs(Math.max(0, (item.endedAt ?? now) - item.startedAt));

const STATE_TEXT: Record<ItemState, string> = {
  waiting: 'waiting',
  migrating: 'migrating',
  retrying: 'retrying',
  moved: 'moved',
  stopped: 'stopped',
  stayed: 'stayed',
};

/** Where from and where to, as far as known. */
export function route(item: TrackedItem): string {
  if (item.state === 'moved') return `${item.source} → ${item.target ?? '?'}`;
  if (item.state === 'migrating' || item.state === 'retrying')
    return `${item.source} → ${item.target ?? '…'}`;
  return item.source;
}

function itemLine(item: TrackedItem, now: number, nameWidth: number, routeWidth: number): string {
  const attempt = item.attempts > 1 ? `  (attempt ${item.attempts})` : '';
  return [
    '  ',
    item.kind.padEnd(9),
    item.name.padEnd(nameWidth),
    '  ',
    STATE_TEXT[item.state].padEnd(10),
    route(item).padEnd(routeWidth),
    '  ',
    took(item, now).padStart(7),
    attempt,
  ].join('');
}

export function podBar(p: PodProgress, width = 24): string {
  const filled = p.total === 0 ? width : Math.round((p.evicted / p.total) * width);
  const terminating = p.terminating > 0 ? ` (${p.terminating} terminating)` : '';
  return `  pods     [${'█'.repeat(filled)}${'░'.repeat(width - filled)}]  ${p.evicted}/${p.total} evicted${terminating}`;
}

export function frame(s: Snapshot, node: string, startedAt: number): string[] {
  const nameWidth = Math.max(4, ...s.items.map((i) => i.name.length));
  const routeWidth = Math.max(...s.items.map((i) => route(i).length), 0);
  return [
    `${node}: ${s.phase}  ${secs(s.now - startedAt)}`,
    ...s.items.map((i) => itemLine(i, s.now, nameWidth, routeWidth)),
    podBar(s.pods),
  ];
}

/** Redraws the frame in place (cursor up, clear line); lines are cut to the terminal width. */
export function ttyView(out: OutStream, node: string, startedAt: number): ProgressView {
  let drawn = 0;
  let last = '';
  return {
    update(s) {
      const cols = out.columns ?? 120;
      const lines = frame(s, node, startedAt).map((l) => (l.length > cols - 1 ? l.slice(0, cols - 1) : l));
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
      say('phase', s.phase, `${at} ${node}: ${s.phase}`);
      for (const i of s.items) {
        const when = i.state === 'moved' ? ` in ${took(i, s.now)}` : '';
        const attempt = i.attempts > 1 ? ` (attempt ${i.attempts})` : '';
        say(
          `${i.kind}/${i.id}`,
          `${i.state}/${i.target ?? ''}/${i.attempts}`,
          `${at} ${i.kind} ${i.name}: ${i.state} ${route(i)}${when}${attempt}`,
        );
      }
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
