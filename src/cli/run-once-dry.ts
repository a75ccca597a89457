// `drainer run-once --dry-run`: what the evacuation would do, from the same pre-flight as `drainer
// plan` (with Kubernetes access, or the plugins alone on a bare host), and never a phase it did not
// reach (no "Evacuated", no "done, 0 moved").
// run-once is an operator's "now", so windows, freezes and blockers are not weighed here.
// Exit codes as run-once's: 0 it would go through, 1 it would stop (refused, or unknown), 2 bad input.
import { ExitCode } from '../errors.ts';
import { gateProbe } from '../core/gate/probe.ts';
import { PluginHost } from '../core/backends/host.ts';
import type { BackendPlugin, NodeRef } from '../core/backends/plugin.ts';
import { preflight, type PreflightReport } from '../core/preflight/preflight.ts';
import type { Config } from '../config/schema.ts';
import type { KubeClients } from '../kube/client.ts';
import type { Logger } from '../observability/logger.ts';
import type { CliIo } from './context.ts';
import { requireNamespace } from './fleet-namespace.ts';

function countBy(items: readonly string[]): string {
  const n = new Map<string, number>();
  for (const i of items) n.set(i, (n.get(i) ?? 0) + 1);
  return [...n].map(([what, count]) => `${count} ${what}`).join(', ');
}

/** The lines a person reads: what would change, what would move, what would stop it. */
export function dryRunLines(r: PreflightReport, o: { cordon: boolean; said?: string }): string[] {
  const lines = [`dry run of run-once on node ${r.node}: nothing was changed`];
  if (o.said) lines.push(`config: ${o.said}`);
  if (o.cordon) lines.push(`would cordon ${r.node} first (--cordon), unless it is cordoned already`);
  for (const p of r.plans) {
    const moving = p.workloads.filter((w) => w.action !== 'none');
    const stuck = p.workloads.filter((w) => w.action === 'none');
    // the whole count first, then its parts: "2 workload(s): 1 would be handled (…), 1 cannot move"
    const parts = [
      ...(moving.length
        ? [`${moving.length} would be handled (${countBy(moving.map((w) => w.action))})`]
        : []),
      ...(stuck.length ? [`${stuck.length} cannot move`] : []),
    ];
    lines.push(
      `${p.plugin}: ${p.workloads.length ? `${p.workloads.length} workload(s): ${parts.join(', ')}` : 'nothing would move'}`,
    );
    for (const w of stuck) lines.push(`  cannot move: ${w.name} (${w.blocker ?? 'blocked'})`);
  }
  for (const e of r.errors) lines.push(`${e.plugin}: could not plan: ${e.message}`);
  if (r.pods)
    lines.push(
      `pods: would evict ${r.pods.evict}, leave ${r.pods.ignored} alone, ${r.pods.refused.length} refused`,
    );
  const verdict =
    r.verdict === 'would-succeed' || r.verdict === 'would-wait'
      ? 'would go through'
      : r.verdict === 'refused'
        ? 'would stop before its first change'
        : r.verdict === 'bad-input'
          ? 'bad input'
          : 'unknown (could not find out)';
  lines.push(`verdict: ${verdict}`);
  for (const reason of r.reasons) lines.push(`  - ${reason}`);
  return lines;
}

export async function dryRunOnce(input: {
  readonly config: Config;
  readonly io: CliIo;
  readonly log: Logger;
  readonly node: string;
  readonly k: KubeClients | undefined;
  readonly plugins: readonly BackendPlugin[];
  readonly cordon: boolean;
  /** Without Kubernetes: the node as run-once's flags declare it. */
  readonly declared?: NodeRef;
  /** Where the settings came from (the agents' ConfigMap), said under the first line. */
  readonly said?: string;
}): Promise<number> {
  const { config, io, k, node } = input;
  if (k) await requireNamespace(k, config.fleet.namespace, io.signal); // as plan, status and doctor
  const host = new PluginHost({ plugins: [...input.plugins], log: input.log });
  const report = await preflight({
    node,
    config: { ...config, dryRun: false },
    host,
    log: input.log,
    signal: io.signal,
    ...(k ? { kube: k, gate: gateProbe(k, config) } : {}),
    startGate: false,
    ...(input.declared ? { declared: input.declared } : {}),
  });
  for (const e of [...report.invalid, ...report.unknown]) io.stderr.write(`error: ${e}\n`);
  if (report.verdict === 'bad-input') return ExitCode.badInput;
  for (const line of dryRunLines(report, {
    cordon: input.cordon,
    ...(input.said ? { said: input.said } : {}),
  }))
    io.stdout.write(`${line}\n`);
  return report.verdict === 'would-succeed' ? ExitCode.ok : ExitCode.incomplete;
}
