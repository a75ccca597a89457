// The drain gate in `drainer plan` is information: whether drains of the node wait for drainer now.
// It never decides the verdict, and a gate that cannot be read (no rights to drainer's namespace)
// must not turn "would succeed" into "could not find out".
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { PluginHost } from '../../src/core/backends/host.ts';
import { planExitCode, preflight, type GateProbe } from '../../src/core/preflight/preflight.ts';
import { ApiError } from '../../src/errors.ts';
import { createLogger } from '../../src/observability/logger.ts';

const log = createLogger({ level: 'silent' });
const run = (gate: GateProbe) =>
  preflight({
    node: 'node-7',
    config: configSchema.parse({}),
    host: new PluginHost({ plugins: [], log }),
    log,
    signal: new AbortController().signal,
    gate,
  });

describe('plan: the drain gate', () => {
  it('reports a held gate as a note; the verdict stays "would succeed" (exit 0)', async () => {
    const r = await run(async () => ({ state: 'held', note: 'held (drainer/drainer-gate-node-7)' }));
    expect(r.verdict).toBe('would-succeed');
    expect(planExitCode(r.verdict)).toBe(0);
    expect(r.notes).toContain('drain gate: held (drainer/drainer-gate-node-7)');
  });

  it('a gate it cannot read is a note naming why, not an unknown verdict', async () => {
    const r = await run(async () => {
      throw new ApiError('API', 'kubernetes GET …/poddisruptionbudgets/drainer-gate-node-7: 403 forbidden', {
        api: 'kubernetes',
        status: 403,
      });
    });
    expect(r.verdict).toBe('would-succeed');
    expect(r.unknown).toEqual([]);
    expect(r.notes.find((n) => n.startsWith('drain gate: not read'))).toMatch(/403 forbidden/);
  });
});
