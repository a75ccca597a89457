// The header line of `drainer status`: the window state and the next opening, active freezes,
// and the blockers firing (the shared Prometheus verdict, nodes a pod holds); a waiting node's
// reason in its row.
import { describe, expect, it } from 'vitest';
import { gateView, headerLine } from '../../src/cli/status-header.ts';
import { renderStatus } from '../../src/cli/status-render.ts';
import type { FleetRow } from '../../src/core/fleet/fleet-view.ts';
import { configSchema } from '../../src/config/schema.ts';

const fleet = (f: object) => configSchema.parse({ fleet: f }).fleet;
const weekend = { days: ['sat', 'sun'], start: '02:00', end: '06:00', timeZone: 'Europe/Berlin' };
const FRIDAY = new Date('2026-11-27T15:48:00Z');

const queued = (node: string, kind: string, reason: string): FleetRow => ({
  node,
  phase: 'Queued',
  trigger: 'cordon',
  since: '2026-11-27T15:00:00Z',
  queuedAt: '2026-11-27T15:00:00Z',
  queuePosition: 1,
  progress: {},
  waiting: { kind, reason },
});

describe('drainer status header', () => {
  it('window closed with its next opening, a freeze, Prometheus firing and a node held by a pod', () => {
    const f = fleet({
      maintenanceWindows: [weekend],
      freezes: [{ from: '2026-11-27T00:00:00Z', to: '2026-11-28T03:00:00Z', reason: 'release week' }],
    });
    const rows = [queued('r3', 'pods', 'blocked by pod on the node matching app=backup: default/backup-1')];
    const v = gateView(f, rows, { at: 0, firing: ['CephHealthWarning'] }, FRIDAY);
    // too long for one line of an ordinary terminal: one line each
    expect(headerLine(v).split('\n')).toEqual([
      'window: closed, opens Sat 02:00 Europe/Berlin (in 9 h 12 min)',
      'freezes: release week until 2026-11-28T03:00:00Z; starts may resume in 11 h 12 min',
      'blockers: Prometheus alert firing: CephHealthWarning; pods hold r3',
    ]);
    // a wide one keeps them on one line
    expect(headerLine(v, 300)).toBe(
      'window: closed, opens Sat 02:00 Europe/Berlin (in 9 h 12 min) · ' +
        'freezes: release week until 2026-11-28T03:00:00Z; starts may resume in 11 h 12 min · ' +
        'blockers: Prometheus alert firing: CephHealthWarning; pods hold r3',
    );
  });

  it('fits 120 columns however much fires: each part on its line, a long one wrapped under itself', () => {
    const firing = Array.from({ length: 12 }, (_, i) => `NodeDiskPressureOnRack${i + 1}`);
    const v = gateView(fleet({}), [], { at: 0, firing }, FRIDAY);
    const lines = headerLine(v).split('\n');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(120);
    expect(lines[0]).toBe('window: always open (no maintenance windows)');
    expect(lines[2]).toMatch(/^blockers: Prometheus alerts? firing: NodeDiskPressureOnRack1, /);
    expect(lines.slice(3).every((l) => l.startsWith('  '))).toBe(true);
    expect(lines.join(' ').replace(/ +/g, ' ')).toContain('NodeDiskPressureOnRack12');
  });

  it('no windows: always open; nothing firing; Prometheus that cannot be evaluated is named', () => {
    expect(headerLine(gateView(fleet({}), [], undefined, FRIDAY))).toBe(
      'window: always open (no maintenance windows) · freezes: none · blockers: none firing',
    );
    const v = gateView(
      fleet({}),
      [],
      { at: 0, firing: [], error: 'http://p:9090/api/v1/alerts unreachable' },
      FRIDAY,
    );
    expect(v.blockers).toEqual(['Prometheus cannot be evaluated: http://p:9090/api/v1/alerts unreachable']);
    expect(
      gateView(fleet({ maintenanceWindows: [weekend] }), [], undefined, new Date('2026-11-28T02:00:00Z'))
        .window,
    ).toBe('open');
  });

  it('a config without the windows: the waiting nodes say it', () => {
    const rows = [
      queued('r1', 'window', 'outside the maintenance window; opens Sat 02:00 Europe/Berlin (in 9 h 12 min)'),
      queued('r2', 'freeze', 'frozen (x) until 2026-11-28T03:00:00Z; opens Sat 02:00 UTC (in 10 h)'),
    ];
    const v = gateView(fleet({}), rows, undefined, FRIDAY);
    expect(v.window).toBe(
      'closed (r1: outside the maintenance window; opens Sat 02:00 Europe/Berlin (in 9 h 12 min))',
    );
    expect(v.freezes).toEqual(['r2: frozen (x) until 2026-11-28T03:00:00Z; opens Sat 02:00 UTC (in 10 h)']);
  });

  it('the table starts with the header; a waiting row shows why under it; JSON carries it as fleet', () => {
    const rows = [
      queued('r1', 'window', 'outside the maintenance window; opens Sat 02:00 Europe/Berlin (in 9 h 12 min)'),
    ];
    const v = gateView(fleet({ maintenanceWindows: [weekend] }), rows, undefined, FRIDAY);
    const table = renderStatus(rows, 'table', FRIDAY, v).split('\n');
    expect(table[0]).toBe(headerLine(v));
    expect(table.slice(2, 4)).toEqual([
      expect.stringMatching(/^r1 +Queued +48m0s +queue #1 +off$/),
      '      waiting: outside the maintenance window; opens Sat 02:00 Europe/Berlin (in 9 h 12 min)',
    ]);
    const json = JSON.parse(renderStatus(rows, 'json', FRIDAY, v)) as { fleet: unknown; nodes: FleetRow[] };
    expect(json.fleet).toEqual(v);
    expect(json.nodes[0]?.waiting?.kind).toBe('window');
    // no gate: the output is as before
    expect(renderStatus(rows, 'table', FRIDAY).split('\n')[0]).toMatch(/^NODE +PHASE/);
  });

  it('the plugins keep one order on every row, whatever order each record wrote them in', () => {
    const evacuating = (node: string, progress: FleetRow['progress']): FleetRow => {
      const { waiting: _none, queuePosition: _q, ...rest } = queued(node, 'window', '');
      return { ...rest, phase: 'Evacuating', progress };
    };
    const rows = [
      evacuating('r1', {
        nova: { moved: 1, total: 2, failed: 0 },
        kubevirt: { moved: 0, total: 1, failed: 0 },
      }),
      evacuating('r2', {
        kubevirt: { moved: 1, total: 3, failed: 0 },
        nova: { moved: 0, total: 4, failed: 0 },
      }),
    ];
    const table = renderStatus(rows, 'table', FRIDAY).split('\n');
    expect(table[1]).toContain('nova 1/2, kubevirt 0/1');
    expect(table[2]).toContain('nova 0/4, kubevirt 1/3');
  });

  it("a long last error is cut at a word's end: a VM's name is whole or not there", () => {
    const lastError =
      'nova: not every workload moved: 3 left (db-primary-07, web-frontend-11, analytics-worker-0042, cache-03)';
    const row: FleetRow = { ...queued('r1', 'window', ''), phase: 'Failed', lastError };
    const { waiting: _none, ...failed } = row;
    // the row's long text is on the line under it
    const cell = renderStatus([failed], 'table', FRIDAY).split('\n')[2] ?? '';
    expect(cell.length).toBeLessThanOrEqual(120);
    const shown = cell.slice(cell.indexOf('nova: not every')).replace('… (-o wide shows it all)', '');
    expect(lastError.startsWith(shown)).toBe(true);
    // what is shown ends at a name's end
    expect(shown).toMatch(/(db-primary-07|web-frontend-11|analytics-worker-0042)$/);
    expect(cell).toMatch(/… \(-o wide shows it all\)$/);
  });
});
