// Story: before any reboot, `drainer plan` says in one line whether logind's time (InhibitDelayMaxUSec,
// which the kubelet's shutdownGracePeriod sets) covers this node's evacuation, estimated from the memory
// of the VMs to move at the configured rate, and which setting to raise when it does not.
import { describe, expect, it } from 'vitest';
import { shutdownCheck } from '../../src/core/shutdown/check.ts';

const GiB = 1024 ** 3;
const base = { rateMiBps: 1024, atOnce: 1, marginSeconds: 5 };

describe("the check of logind's time against the node's evacuation", () => {
  it('says an unplanned reboot now leaves VMs to their fallback, and what to raise, when the time is short', () => {
    const r = shutdownCheck({
      ...base,
      delayMaxMs: 30_000,
      vms: [{ memoryBytes: 16 * GiB }, { memoryBytes: 16 * GiB }],
    });
    expect(r.short).toBe(true);
    expect(r.line).toBe(
      "shutdown: logind gives 30s (InhibitDelayMaxUSec), this node's evacuation needs about 47s " +
        '(2 VMs, 32 GiB at 1024 MiB/s, 5s a move, 5s margin): an unplanned reboot now leaves VMs to their ' +
        "fallback (Nova: stopped); raise the kubelet's shutdownGracePeriod (it sets logind's InhibitDelayMaxSec) to 47s or more",
    );
  });

  it('says the time covers it when it does', () => {
    const r = shutdownCheck({ ...base, delayMaxMs: 300_000, vms: [{ memoryBytes: 4 * GiB }] });
    expect(r.short).toBe(false);
    expect(r.line).toMatch(
      /^shutdown: logind gives 5m .* needs about 14s .*: an unplanned reboot now is evacuated in time$/,
    );
  });

  it('says what it cannot know: logind unread, or VMs of unknown memory', () => {
    const r = shutdownCheck({
      ...base,
      delayMaxMs: 'no system bus at /run/dbus/system_bus_socket',
      vms: [{ memoryBytes: 2 * GiB }, {}],
    });
    expect(r.short).toBe(false);
    expect(r.line).toBe(
      "shutdown: logind's InhibitDelayMaxUSec unknown (no system bus at /run/dbus/system_bus_socket), " +
        "this node's evacuation needs about 17s (2 VMs, 2 GiB at 1024 MiB/s, 1 of unknown memory not counted, 5s a move, 5s margin): " +
        "compare with the kubelet's shutdownGracePeriod (it sets logind's InhibitDelayMaxSec)",
    );
  });

  it('has nothing to weigh on a node with no VMs', () => {
    expect(shutdownCheck({ ...base, delayMaxMs: 5000, vms: [] }).line).toBe(
      'shutdown: no VMs to move: an unplanned reboot is not delayed',
    );
  });
});
