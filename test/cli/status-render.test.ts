// The status table's SINCE for a Queued node: its age in the queue by the API server's clock.
import { describe, expect, it } from 'vitest';
import { renderStatus } from '../../src/cli/status-render.ts';
import type { FleetRow } from '../../src/core/fleet/fleet-view.ts';

const NOW = new Date('2026-03-01T12:10:00Z');
const queued = (fields: Partial<FleetRow>): FleetRow => ({
  node: 'node-q',
  phase: 'Queued',
  trigger: 'cordon',
  since: '2026-03-01T11:00:00Z',
  progress: {},
  ...fields,
});
const since = (row: FleetRow): string | undefined =>
  renderStatus([row], 'table', NOW).split('\n')[1]?.split(/\s+/)[2];

describe('status SINCE of a Queued node', () => {
  it("counts from the API server's stamp (queueStamp) where the record has it, not this agent's clock", () => {
    // the agent's clock ran 3 minutes fast when it queued
    const row = queued({ queuedAt: '2026-03-01T12:03:00Z', queueStamp: Date.parse('2026-03-01T12:00:00Z') });
    expect(since(row)).toBe('10m0s');
  });

  it('counts from queuedAt in a record written before queueStamp', () => {
    expect(since(queued({ queuedAt: '2026-03-01T12:03:00Z' }))).toBe('7m0s');
  });
});
