// Story: someone without a cluster runs `drainer demo`: the sandbox starts with one agent per node,
// a node is cordoned and evacuated, uncordoned and put back, and a summary says what moved where.
// Then a small fleet's two nodes are cordoned at once: one waits Queued for the slot (the act's
// records are checked in test/demo/fleet.test.ts); then a node is drained as fleet tools do and the
// drain waits for its VMs (test/demo/drain.test.ts).
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { Capture } from './harness.ts';

async function demo(args: string[], opts: { tty?: boolean; stopWhen?: RegExp } = {}) {
  const cwd = mkdtempSync(path.join(tmpdir(), 'drainer-demo-'));
  const stdout = new Capture(opts.tty);
  const stderr = new Capture();
  const stop = new AbortController();
  if (opts.stopWhen) {
    const write = stdout.write.bind(stdout);
    stdout.write = (chunk: string) => {
      const r = write(chunk);
      if (opts.stopWhen?.test(stdout.text)) stop.abort();
      return r;
    };
  }
  const code = await main(['demo', '--scale', '10', '--state-dir', 'state', ...args], {
    io: { stdout, stderr, env: {}, cwd, homeDir: cwd, etcDir: cwd, signal: stop.signal },
  });
  return { code, out: stdout.text, err: stderr.text, cwd };
}

/** Rows of the summary table: plugin, workload, from, to, took, attempts, result. */
const summaryRows = (out: string) =>
  out
    .slice(out.indexOf('PLUGIN '))
    .split('\n')
    .slice(1)
    .filter((l) => /^(nova|kubevirt|pods) /.test(l))
    .map((l) => l.split(/\s{2,}/));

describe('drainer demo', () => {
  it('evacuates a node with servers, VMIs and pods, puts it back in service and exits 0', async () => {
    const { code, out, err } = await demo([]);

    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toMatch(/kubectl cordon node-1 /);
    const rows = summaryRows(out);
    const nova = rows.filter((r) => r[0] === 'nova');
    const vmis = rows.filter((r) => r[0] === 'kubevirt');
    expect(nova.map((r) => r[1]).sort()).toEqual(['alpha-web-1', 'alpha-web-2', 'beta-db-1', 'gamma-ci-1']);
    expect(vmis.map((r) => r[1]).sort()).toEqual(['vms/vm-web-1', 'vms/vm-web-2']);
    for (const r of [...nova, ...vmis]) {
      expect(r[6], r[1]).toBe('moved');
      expect(r[3], r[1]).not.toMatch(/^node-1\b/);
    }
    expect(rows.find((r) => r[0] === 'pods')?.[6]).toBe('drained');
    expect(out).toMatch(/^evacuation: Evacuated after/m);
    expect(out).toMatch(/^back in service: yes/m);
    expect(out).toMatch(/^Kubernetes API: \d+ requests \(.*patch nodes/m);
    expect(out).toMatch(/^Nova: \d+ requests \(.*POST \/servers\/\{id\}\/action ×4/m);
    // not a terminal: plain lines, no cursor movement
    expect(out).not.toContain('\x1b[');
    expect(out).toMatch(/\] nova beta-db-1: moved node-1\.cloud\.example\.org → node-\d in /);
    // the busy server: its copy stops converging, drainer shows it and forces it to complete
    expect(out).toMatch(/\] nova beta-db-1: migrating \d+ % \(\d+(\.\d)? of 8 GiB left, not converging\) /);
    expect(out).toMatch(/\] node-1: Evacuating \(holds drainer-evacuation-0\)$/m);
    // the fleet act: two nodes at once, one queued behind the other, then both evacuated and back
    expect(out).toMatch(/^kubectl cordon rack-1 rack-2 /m);
    expect(out).toMatch(/\] rack-\d: Queued \(drainer-evacuation-0 held by rack-\d\)$/m);
    expect(out).toMatch(
      /\] rack-2: Queued \(blocked by pod on the node matching app=backup: default\/backup-1\)$/m,
    );
    expect(out).toMatch(/^rack-\d queued \d+\.\d s behind rack-\d, then evacuated in \d+\.\d s$/m);
    expect(out).toMatch(/^fleet: Evacuated after .*; back in service after/m);
    // the drain act: no kubectl on this PATH, so the Eviction-API loop; held while the VMs moved
    expect(out).toMatch(/\] drain held by the gate: 2 of 2 servers still on rack-1$/m);
    expect(out).toMatch(
      /^Eviction API of rack-1: the last of its 2 VMs left at [\d.]+ s, the drain returned at [\d.]+ s \([\d.]+ s after the last VM left;.* with 0 VMs on the node$/m,
    );
    expect(out).toMatch(/^demo took \d+\.\d s; OK$/m);
    expect(out.trimEnd().split('\n').at(-1)).toMatch(/^demo took/);
  });

  it('says so and exits 1 when the evacuation fails (node-4 holds a VMI that cannot migrate)', async () => {
    const { code, out } = await demo(['--node', 'node-4', '--no-fleet', '--no-drain']);

    expect(code).toBe(1);
    expect(out).toMatch(/node-4: evacuation FAILED: .*vm-legacy/);
    expect(out).toMatch(/^evacuation: Failed after/m);
    expect(summaryRows(out).find((r) => r[1] === 'vms/vm-legacy')?.[6]).toBe('stayed');
    expect(out).toMatch(/^back in service: yes/m);
    expect(out).toMatch(/FAILED$/m);
    expect(out).not.toContain('rack-1');
  });

  it('with --keep, prints kubectl commands for the still running sandbox and stops on Ctrl-C', async () => {
    const { code, out, cwd } = await demo(['--keep', '--node', 'node-4', '--no-fleet', '--no-drain'], {
      stopWhen: /Ctrl-C stops/,
    });

    expect(code).toBe(1);
    expect(out).toContain('kubectl --kubeconfig state/kubeconfig cordon node-1');
    expect(out).toContain('kubectl --kubeconfig state/kubeconfig uncordon node-1');
    // drainer's own hints name the sandbox's config: a newcomer's first plan must not fail for want of it
    expect(out).toContain('npx drainer plan --node node-1 --config-path state/config.yaml');
    expect(out).toContain('npx drainer status --watch --config-path state/config.yaml');
    expect(out.split('\n').filter((l) => /npx drainer /.test(l) && !l.includes('--config-path'))).toEqual([]);
    expect(existsSync(path.join(cwd, 'state', 'kubeconfig'))).toBe(true);
    expect(existsSync(path.join(cwd, 'state', 'config.yaml'))).toBe(true);
  });
});
