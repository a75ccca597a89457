// `drainer plan`: the dry run of the real thing (core/preflight/preflight.ts), as a table, JSON or YAML.
// Exit codes: 0 it would succeed, 3 it would be refused or blocked (the reasons are printed),
// 1 it could not find out (an API failed), 2 bad input.
import { countPlans, vmsText } from '../core/backends/vm-count.ts';
import yaml from 'js-yaml';
import type { Argv, CommandModule } from 'yargs';
import { ExitCode } from '../errors.ts';
import { gateProbe } from '../core/gate/probe.ts';
import { PluginHost } from '../core/backends/host.ts';
import { planExitCode, preflight, type PreflightReport } from '../core/preflight/preflight.ts';
import {
  cliLogger,
  commandPlugins,
  kubeHttp,
  type CliIo,
  type GlobalArgs,
  handle,
  loadCliConfig,
  nodeNameOf,
  quietUnlessAsked,
} from './context.ts';
import { kubeIfConfigured } from './kube-once.ts';
import { requireNamespace } from './fleet-namespace.ts';
import { clusterConfig } from './cluster-config.ts';
import { declaredNode, withNodeFlags, type NodeFlagArgs } from './node-flags.ts';
import { renderTable } from '../output/table.ts';
import { timeoutWarnings } from '../core/capi/tool-timeouts.ts';
import { shutdownLine } from './shutdown-check.ts';

type PlanOutput = 'table' | 'json' | 'yaml';

interface PlanArgs extends GlobalArgs, NodeFlagArgs {
  output: PlanOutput;
}

const VERDICT_TEXT: Record<PreflightReport['verdict'], string> = {
  'would-succeed': 'would succeed',
  'would-wait': 'would WAIT',
  refused: 'would be REFUSED',
  unknown: 'UNKNOWN (could not find out)',
  'bad-input': 'bad input',
};

function pluginLines(r: PreflightReport): string[] {
  const lines: string[] = [];
  for (const p of r.plans) {
    const where = p.location ? ` (${p.location})` : '';
    const here = countPlans([p]);
    lines.push(`${p.plugin}${where}: ${vmsText(here.names.length, here.stopped)} on node ${r.node}`);
    const c = p.capacity;
    if (c) lines.push(`  capacity: ${c.status === 'short' ? 'INSUFFICIENT: ' : ''}${c.message}`);
    for (const b of p.blockers ?? []) lines.push(`  BLOCKED (${b.kind}): ${b.message}`);
  }
  return lines;
}

function tableText(r: PreflightReport): string {
  // a node that cannot be read (one that does not exist) has nothing to show: its one error line says it
  if (r.invalid.length && r.plans.length === 0 && r.errors.length === 0) return '';
  const lines = pluginLines(r);
  const rows = r.plans.flatMap((p) =>
    p.workloads.map((w) => [p.plugin, w.name, w.owner, w.state, w.action, w.blocker ?? w.why ?? '']),
  );
  let text = lines.map((l) => `${l}\n`).join('');
  if (rows.length)
    text += renderTable(['PLUGIN', 'WORKLOAD', 'PROJECT/OWNER', 'STATE', 'ACTION', 'WHY'], rows);
  // a node that could not be read plans nothing: its error (stderr) says why
  const answered = r.invalid.length === 0 && r.unknown.length === 0;
  if (answered && r.plans.length === 0 && r.errors.length === 0)
    text += 'no plugin is enabled: nothing to plan\n';
  if (r.pods) {
    const p = r.pods;
    text += `pods: ${p.evict} to evict, ${p.ignored} left alone, ${p.refused.length} refused, ${p.held.length} held by a PodDisruptionBudget now\n`;
  }
  if (r.fleet) text += `fleet: ${r.fleet.text}\n`;
  for (const n of r.notes) text += /^(config|warning): /.test(n) ? `${n}\n` : `note: ${n}\n`;
  // a wait is one line: what holds the start, and when it may start
  const wait = r.verdict === 'would-wait' ? `: ${r.waits.join('; ')}` : '';
  text += `verdict: ${VERDICT_TEXT[r.verdict]}${wait}\n`;
  for (const reason of r.reasons) text += `  - ${reason}\n`;
  return text;
}

export function printPlan(report: PreflightReport, output: PlanOutput, io: CliIo): number {
  if (output === 'json') io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else if (output === 'yaml') io.stdout.write(yaml.dump(report, { lineWidth: 120 }));
  else io.stdout.write(tableText(report));
  // what could not be found out (and bad input) goes to stderr, one line each
  for (const e of [...report.invalid, ...report.unknown]) io.stderr.write(`error: ${e}\n`);
  return planExitCode(report.verdict);
}

export async function runPlan(argv: PlanArgs): Promise<number> {
  const local = await loadCliConfig(argv);
  const { io } = argv.cli;
  const kube = kubeIfConfigured(local, io.env, kubeHttp(local, io));
  // a namespace the cluster lacks (a typo in -n) is bad input, as in status and doctor: a plan read
  // there would find no gate and no agents, and call the drain safe
  if (kube) await requireNamespace(kube, local.fleet.namespace, io.signal);
  // with a cluster: the node as its agent would weigh it (the agents' ConfigMap, credentials)
  const view = kube ? await clusterConfig(argv, local, kube, { cloud: true }) : undefined;
  const config = view?.config ?? local;
  // The report is the output; logs only for unexpected failures unless asked for.
  const log = cliLogger(config, io, quietUnlessAsked(config, 'error'));
  const node = nodeNameOf(config, io);
  const declared = declaredNode(node, argv, kube !== undefined);
  if ('refused' in declared) {
    io.stderr.write(`error: ${declared.refused}\n`);
    return ExitCode.badInput;
  }
  const plugins = commandPlugins(argv, config, log, kube);
  const host = new PluginHost({ plugins, log });
  const report = await preflight({
    node,
    config,
    host,
    log,
    signal: io.signal,
    ...(kube ? { kube, gate: gateProbe(kube, config) } : { declared: declared.ref }),
  });
  // where the settings came from, among the notes (a node that cannot be read prints only its error)
  // fleet tools that would give up on this drain and delete the node with VMs on it (issue 50)
  const warnings = kube
    ? (await timeoutWarnings(kube, node, report.plans, config).catch(() => [])).map((w) => `warning: ${w}`)
    : [];
  // would an unplanned reboot of the host now leave VMs to their fallback (logind's time, issue 49)
  const shutdown = report.plans.length ? await shutdownLine(config, report.plans) : undefined;
  const notes = [
    ...(view ? [`config: ${view.said}`] : []),
    ...report.notes,
    ...warnings,
    ...(shutdown ? [shutdown] : []),
  ];
  // a node name nobody gave is this machine's hostname: say so where the cluster does not know it
  const invalid = config.nodeName
    ? report.invalid
    : report.invalid.map((e) =>
        e === `node ${node} does not exist in the cluster`
          ? `${e} (${node} is this machine's hostname: name the node with --node, or set NODE_NAME)`
          : e,
      );
  return printPlan({ ...report, notes, invalid }, argv.output, io);
}

export const command: CommandModule<GlobalArgs, PlanArgs> = {
  command: 'plan',
  describe:
    'the dry run of an evacuation (no changes): what would move, what blocks it; exit 0 would succeed, 3 refused, 1 unknown, 2 bad input',
  builder: (y: Argv<GlobalArgs>) =>
    withNodeFlags(y).option('output', {
      alias: 'o',
      choices: ['table', 'json', 'yaml'] as const,
      default: 'table' as const,
      describe: 'output format',
    }),
  handler: handle(runPlan),
};
