// `drainer doctor`: drainer's promises (src/invariants) checked read-only against the live cluster
// and cloud, GETs only. Each finding names the object, the evidence and the fix. Exit codes: 0 all
// is well, 3 a finding, 1 it could not look (an API failed), 2 bad input (config, credentials).
import type { Argv, CommandModule } from 'yargs';
import { kubeTarget } from '../config/kube-target.ts';
import type { Config } from '../config/schema.ts';
import { isDisabledByDrainer } from '../core/restore/stranded.ts';
import { checkInvariants } from '../invariants/check.ts';
import { agentAlive } from '../invariants/agents.ts';
import { hasGate } from '../invariants/rules/gate-keeper.ts';
import { hostOfNode, recordOf } from '../invariants/hosts.ts';
import { checkOptionsOf } from '../invariants/options.ts';
import { readKubeWorld, type KubeWorld } from '../invariants/read-kube.ts';
import { readNovaWorld } from '../invariants/read-nova.ts';
import type { Violation } from '../invariants/violation.ts';
import type { World, WorldService } from '../invariants/world.ts';
import { createKubeClients } from '../kube/client.ts';
import { targetOptions } from '../kube/target-options.ts';
import { type GlobalArgs, handle, kubeHttp, loadCliConfig } from './context.ts';
import { computeReader, novaFor } from './doctor-nova.ts';
import { doctorReport, doctorText } from './doctor-render.ts';
import { noAgentText, requireNamespace } from './fleet-namespace.ts';
import { clusterConfig } from './cluster-config.ts';
import { violation } from '../invariants/violation.ts';
import { LOGIND_DELAY_ANNOTATION } from '../core/shutdown/mark.ts';

export const FINDINGS_EXIT = 3;

interface DoctorArgs extends GlobalArgs {
  output: 'table' | 'json';
}

/**
 * The hosts worth a closer look: disabled by drainer, named by a record, by a node's migration Events, or
 * of a node whose drain gate stands with no live agent (whether it guards anything is its servers' say).
 */
export function hostsToRead(kube: KubeWorld, config: Config, services: readonly WorldService[]): string[] {
  const world: World = { ...kube, nova: { services, servers: [], migrations: [] } };
  const prefix = config.nova.disabledReasonPrefix;
  const opts = { hostMapping: config.nova.hostMapping };
  const checks = checkOptionsOf(config, kube.nodes.length);
  const nodes = new Set([
    ...kube.nodes.filter((n) => recordOf(n)).map((n) => n.name),
    ...kube.events.filter((e) => e.reason.startsWith('Migration')).map((e) => e.name),
    ...kube.nodes
      .filter((n) => hasGate(world, n.name) && agentAlive(world, n.name, checks) === false)
      .map((n) => n.name),
    // logind's cap published by the agent: its servers' memory weighs against it (rules/shutdown-time.ts)
    ...(config.shutdown.enabled
      ? kube.nodes.filter((n) => n.annotations[LOGIND_DELAY_ANNOTATION] !== undefined).map((n) => n.name)
      : []),
  ]);
  return [
    ...services.filter((s) => isDisabledByDrainer(s, prefix)).map((s) => s.host),
    ...[...nodes].map((n) => hostOfNode(world, n, opts)).filter((h) => h !== undefined),
  ];
}

async function look(
  local: Config,
  argv: DoctorArgs,
): Promise<{ world: World; config: Config; said: string }> {
  const { io } = argv.cli;
  const target = kubeTarget(local, io.env);
  const k = createKubeClients({ ...targetOptions(target), homeDir: io.homeDir, http: kubeHttp(local, io) });
  await requireNamespace(k, local.fleet.namespace, io.signal);
  // the agents' settings (hostMapping, the disabled reason's prefix, the budget), and their credentials if need be
  const { config, said } = await clusterConfig(argv, local, k, { cloud: true });
  const compute = novaFor(config);
  const kube = await readKubeWorld(k, { namespace: config.fleet.namespace, signal: io.signal });
  if (!compute) return { world: kube, config, said };
  const nova = await readNovaWorld(
    computeReader(compute),
    (services) => hostsToRead(kube, config, services),
    io.signal,
  );
  return { world: { ...kube, nova }, config, said };
}

/**
 * Where no agent holds a node Lease, the promises cannot be checked against what agents do: a
 * finding, never "every promise holds" (a wrong -n, or drainer not installed there).
 */
function noAgent(world: World, namespace: string): Violation[] {
  if (!world.leases || world.leases.some((l) => l.component === 'node-agent')) return [];
  return [
    violation(
      'no-agent',
      `namespace/${namespace}`,
      noAgentText(namespace),
      'name drainer\'s namespace with -n/--namespace (fleet.namespace), or install drainer (README "Install on a cluster")',
    ),
  ];
}

export async function runDoctor(argv: DoctorArgs): Promise<number> {
  const { world, config, said } = await look(await loadCliConfig(argv), argv);
  // a percentage budget is of the nodes running the agent: their Leases say how many
  const agents = world.leases?.filter((l) => l.component === 'node-agent').length || world.nodes.length;
  const findings: Violation[] = [
    ...noAgent(world, config.fleet.namespace),
    ...checkInvariants(world, checkOptionsOf(config, agents)),
  ];
  const report = { ...doctorReport(world, findings), config: said };
  const { io } = argv.cli;
  io.stdout.write(argv.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : doctorText(report));
  return findings.length ? FINDINGS_EXIT : 0;
}

export const command: CommandModule<GlobalArgs, DoctorArgs> = {
  command: 'doctor',
  describe:
    "check drainer's promises against the live cluster and cloud (read-only): stranded services, gates, records without an agent; exit 0 all well, 3 findings, 1 could not look, 2 bad input",
  builder: (y: Argv<GlobalArgs>) =>
    y.option('output', {
      alias: 'o',
      choices: ['table', 'json'] as const,
      default: 'table' as const,
      describe: 'output format',
    }),
  handler: handle(runDoctor),
};
