import { describe, expect, it } from 'vitest';
import { AuthError } from '../../src/errors.ts';
import { MemoryRecordStore, PluginHost } from '../../src/core/backends/host.ts';
import type { BackendPlugin, EvacuationContext, Outcome, Plan } from '../../src/core/backends/plugin.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';

const node = { name: 'node-1' };

function capturingLog() {
  const lines: string[] = [];
  return {
    log: createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(l) } }),
    lines,
  };
}

/** A small fake backend: behaviour per method is given by the test. */
function fake(name: string, parts: Partial<BackendPlugin>): BackendPlugin {
  return {
    name,
    plan: parts.plan ?? (async () => ({ plugin: name, workloads: [] })),
    evacuate: parts.evacuate ?? (async () => ({ plugin: name, succeeded: true, workloads: [] })),
    restore: parts.restore ?? (async () => undefined),
  };
}

function evacuateOpts(over: Partial<Parameters<PluginHost['evacuate']>[1]> = {}) {
  return {
    signal: new AbortController().signal,
    deadline: new Date(Date.now() + 60_000),
    trigger: 'run-once',
    dryRun: false,
    abortOnCancel: false,
    records: new MemoryRecordStore(),
    ...over,
  };
}

const moved = (id: string, durationMs = 2000) =>
  ({ id, name: id, state: 'succeeded', action: 'live-migrate', attempts: 1, durationMs }) as const;

describe('PluginHost.evacuate', () => {
  it('turns a plugin that throws into a failed outcome and still returns the others', async () => {
    const { log, lines } = capturingLog();
    const metrics = new Metrics({ defaultMetrics: false });
    const host = new PluginHost({
      log,
      metrics,
      plugins: [
        fake('nova', {
          evacuate: async () => {
            throw new AuthError('credentials rejected', { api: 'keystone', status: 401 });
          },
        }),
        fake('kubevirt', {}),
      ],
    });

    const outcomes = await host.evacuate(node, evacuateOpts());

    expect(outcomes.map((o) => [o.plugin, o.succeeded])).toEqual([
      ['nova', false],
      ['kubevirt', true],
    ]);
    expect(outcomes[0]?.message).toBe('credentials rejected');
    expect(outcomes[0]?.error).toBeInstanceOf(AuthError);
    expect(lines.join('')).toContain('nova evacuate failed');
    expect(await metrics.text()).toContain(
      'drainer_plugin_errors_total{plugin="nova",operation="evacuate"} 1',
    );
  });

  it('runs plugins side by side, not one after the other', async () => {
    let running = 0;
    let maxRunning = 0;
    const slow = (name: string) =>
      fake(name, {
        evacuate: async () => {
          running++;
          maxRunning = Math.max(maxRunning, running);
          await new Promise((r) => setTimeout(r, 20));
          running--;
          return { plugin: name, succeeded: true, workloads: [] };
        },
      });
    const host = new PluginHost({ log: capturingLog().log, plugins: [slow('a'), slow('b'), slow('c')] });

    await host.evacuate(node, evacuateOpts());

    expect(maxRunning).toBe(3);
  });

  it('aborts the plugins’ signal when the deadline passes and reports the evacuation as failed', async () => {
    let sawAbort: unknown;
    const host = new PluginHost({
      log: capturingLog().log,
      plugins: [
        fake('nova', {
          evacuate: (_n, ctx) =>
            new Promise<Outcome>((resolve) => {
              ctx.signal.addEventListener('abort', () => {
                sawAbort = ctx.signal.reason;
                resolve({ plugin: 'nova', succeeded: false, workloads: [] });
              });
            }),
        }),
      ],
    });

    const [outcome] = await host.evacuate(node, evacuateOpts({ deadline: new Date(Date.now() + 30) }));

    expect(sawAbort).toBeInstanceOf(Error);
    expect(outcome?.succeeded).toBe(false);
    expect(outcome?.message).toMatch(/deadline .* passed/);
  });

  it('stops waiting for a plugin that ignores its aborted signal', async () => {
    const host = new PluginHost({
      log: capturingLog().log,
      abandonAfterMs: 20,
      plugins: [fake('stuck', { evacuate: () => new Promise<Outcome>(() => undefined) })],
    });

    const [outcome] = await host.evacuate(node, evacuateOpts({ deadline: new Date(Date.now() + 10) }));

    expect(outcome).toMatchObject({ plugin: 'stuck', succeeded: false });
    expect(outcome?.message).toContain('did not stop');
  });

  it('passes the caller’s cancel through to the plugins', async () => {
    const ac = new AbortController();
    const host = new PluginHost({
      log: capturingLog().log,
      plugins: [
        fake('nova', {
          evacuate: (_n, ctx) =>
            new Promise<Outcome>((resolve) => {
              ctx.signal.addEventListener('abort', () =>
                resolve({
                  plugin: 'nova',
                  succeeded: false,
                  workloads: [],
                  message: 'cancelled by uncordon',
                }),
              );
              ac.abort(new Error('uncordon'));
            }),
        }),
      ],
    });

    const [outcome] = await host.evacuate(node, evacuateOpts({ signal: ac.signal }));

    expect(outcome?.message).toBe('cancelled by uncordon');
  });

  it('hands each plugin its own record and saves what it writes through the store', async () => {
    const records = new MemoryRecordStore({ nova: { serviceId: 'svc-1', disabledByUs: true } });
    const seen: Record<string, unknown> = {};
    const evacuate = (name: string) => async (_n: unknown, ctx: EvacuationContext) => {
      seen[name] = ctx.record;
      await ctx.save({ ...(ctx.record ?? {}), touched: name });
      return { plugin: name, succeeded: true, workloads: [] };
    };
    const host = new PluginHost({
      log: capturingLog().log,
      plugins: [
        fake('nova', { evacuate: evacuate('nova') }),
        fake('kubevirt', { evacuate: evacuate('kubevirt') }),
      ],
    });

    await host.evacuate(node, evacuateOpts({ records }));

    expect(seen).toEqual({ nova: { serviceId: 'svc-1', disabledByUs: true }, kubevirt: undefined });
    expect(records.toJSON()).toEqual({
      nova: { serviceId: 'svc-1', disabledByUs: true, touched: 'nova' },
      kubevirt: { touched: 'kubevirt' },
    });
  });

  it('counts started, finished and in-flight migrations from the progress lines', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    let inFlightDuring = '';
    const host = new PluginHost({
      log: capturingLog().log,
      metrics,
      plugins: [
        fake('nova', {
          evacuate: async (_n, ctx) => {
            ctx.progress([
              { id: 'a', name: 'a', state: 'migrating', action: 'live-migrate', attempts: 1 },
              { id: 'b', name: 'b', state: 'migrating', action: 'live-migrate', attempts: 1 },
            ]);
            inFlightDuring = await metrics.text();
            // a repeated report and a retry of b: b's second attempt is a second start, a's repeat is not
            ctx.progress([
              { id: 'a', name: 'a', state: 'migrating', action: 'live-migrate', attempts: 1 },
              { id: 'b', name: 'b', state: 'migrating', action: 'live-migrate', attempts: 2 },
            ]);
            return {
              plugin: 'nova',
              succeeded: false,
              workloads: [
                moved('a', 4000),
                { id: 'b', name: 'b', state: 'failed', action: 'live-migrate', attempts: 3 },
                { id: 'c', name: 'c', state: 'blocked', action: 'none', attempts: 0, message: 'ERROR state' },
              ],
            };
          },
        }),
      ],
    });

    const progress: string[] = [];
    await host.evacuate(
      node,
      evacuateOpts({ onProgress: (p, items) => progress.push(`${p}:${items.length}`) }),
    );

    const text = await metrics.text();
    expect(inFlightDuring).toContain('drainer_migrations_in_flight{plugin="nova"} 2');
    expect(text).toContain('drainer_migrations_in_flight{plugin="nova"} 0');
    expect(text).toContain('drainer_migrations_total{plugin="nova",result="succeeded"} 1');
    expect(text).toContain('drainer_migrations_total{plugin="nova",result="failed"} 1');
    expect(text).toContain('drainer_migration_duration_seconds_sum{plugin="nova"} 4');
    expect(text).toContain('drainer_migrations_started_total{plugin="nova"} 3');
    expect(progress).toEqual(['nova:2', 'nova:2']);
  });
});

describe('PluginHost.plan', () => {
  it('collects every plugin’s plan and reports a failing plugin without hiding the others', async () => {
    const plan: Plan = {
      plugin: 'nova',
      location: 'compute-1',
      workloads: [{ id: 's1', name: 'vm1', owner: 'p1', state: 'ACTIVE', action: 'live-migrate' }],
    };
    const boom = new Error('kube down');
    const host = new PluginHost({
      log: capturingLog().log,
      plugins: [
        fake('nova', { plan: async () => plan }),
        fake('kubevirt', {
          plan: async () => {
            throw boom;
          },
        }),
      ],
    });

    const all = await host.planAll(node, new AbortController().signal);

    expect(all).toEqual([
      { plugin: 'nova', plan },
      { plugin: 'kubevirt', error: boom },
    ]);
    await expect(host.plan(node, new AbortController().signal)).rejects.toBe(boom);
  });
});

describe('PluginHost.restore', () => {
  it('restores every plugin from its record and reports the one that failed', async () => {
    const records = new MemoryRecordStore({ nova: { disabledByUs: true } });
    const restored: unknown[] = [];
    const host = new PluginHost({
      log: capturingLog().log,
      plugins: [
        fake('nova', {
          restore: async (_n, ctx) => {
            restored.push(ctx.record);
            await ctx.save({ disabledByUs: false });
          },
        }),
        fake('kubevirt', {
          restore: async () => {
            throw new Error('taint patch refused');
          },
        }),
      ],
    });

    const results = await host.restore(node, {
      signal: new AbortController().signal,
      dryRun: false,
      records,
    });

    expect(restored).toEqual([{ disabledByUs: true }]);
    expect(records.get('nova')).toEqual({ disabledByUs: false });
    expect(results.map(({ plugin, ok, message }) => ({ plugin, ok, message }))).toEqual([
      { plugin: 'nova', ok: true, message: undefined },
      { plugin: 'kubevirt', ok: false, message: 'taint patch refused' },
    ]);
  });

  it('drainer_restore_failed: 0 from the start, 1 while a restore fails (a change left in place), 0 once it works', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    let refuse = true;
    const host = new PluginHost({
      log: capturingLog().log,
      metrics,
      plugins: [
        fake('nova', {
          restore: async () => {
            if (refuse) throw new Error('nova-compute service still disabled: 503');
          },
        }),
        fake('kubevirt', {}),
      ],
    });
    const value = async (plugin: string) =>
      (await metrics.restoreFailed.get()).values.find((v) => v.labels.plugin === plugin)?.value;
    expect(await value('nova')).toBe(0);
    const opts = { signal: new AbortController().signal, dryRun: false, records: new MemoryRecordStore() };
    await host.restore(node, opts);
    expect([await value('nova'), await value('kubevirt')]).toEqual([1, 0]);
    refuse = false;
    await host.restore(node, opts);
    expect(await value('nova')).toBe(0);
  });
});
