// The D-Bus decision proved against the real logind (src/logind/wire.ts says why): our wire reads
// InhibitDelayMaxUSec and receives PrepareForShutdown(true) on `systemctl reboot`; systemd-inhibit's child
// holds a delay lock logind lists and waits for; giving it back lets the reboot go on.
import { afterEach, describe, expect, it } from 'vitest';
import { openBus } from '../../src/logind/bus.ts';
import { systemdInhibit } from '../../src/logind/inhibitor.ts';
import { ShutdownWatch, type ShutdownStart } from '../../src/logind/watch.ts';
import { bootHost, hostUnavailable, type Host } from './host.ts';

const hosts: Host[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.stop();
});

describe.skipIf(hostUnavailable() !== undefined)('against a real systemd-logind', () => {
  it('holds a delay lock logind lists, hears PrepareForShutdown(true) on systemctl reboot, and the reboot waits for the lock', async () => {
    const host = await bootHost(30);
    hosts.push(host);
    const bus = await openBus(host.socketPath);
    const starts: ShutdownStart[] = [];
    const watch = await ShutdownWatch.start({
      bus,
      takeLock: systemdInhibit({ socketPath: host.socketPath, command: host.inhibitCommand }),
      marginMs: 3000,
      onShutdown: (s) => starts.push(s),
    });
    expect(watch.delayMaxMs).toBe(30_000);
    await watch.want(true);
    const listed = host.run('systemd-inhibit', '--list', '--no-pager');
    expect(listed.stdout).toMatch(/drainer.*shutdown:sleep.*live-migrating VMs.*delay/);

    host.reboot();
    await until(() => starts.length === 1);
    let ended = false;
    void host.ended.then(() => (ended = true));
    // logind waits for the lock: systemd is still there a while after the signal
    await new Promise((r) => setTimeout(r, 1500));
    expect(ended).toBe(false);
    await watch.release();
    await host.ended;
    bus.close();
  });
});

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(ok()).toBe(true);
}
