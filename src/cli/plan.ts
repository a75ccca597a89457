// `drainer plan`: what each plugin would move off the node and what blocks it. No side effects.
import type { Argv, CommandModule } from 'yargs';
import { ExitCode, isBadInput } from '../errors.ts';
import { PluginHost, type PlanResult } from '../core/host.ts';
import {
  cliLogger,
  type CliIo,
  type GlobalArgs,
  handle,
  loadCliConfig,
  nodeNameOf,
  plugins,
  quietUnlessAsked,
} from './context.ts';
import { renderTable } from './output-table.ts';

interface PlanArgs extends GlobalArgs {
  output: 'table' | 'json';
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function printPlan(
  node: string,
  results: readonly PlanResult[],
  output: 'table' | 'json',
  io: CliIo,
): number {
  const failed = results.filter((r) => r.error !== undefined);
  if (output === 'json') {
    const plans = results.flatMap((r) => (r.plan ? [r.plan] : []));
    const errors = failed.map((r) => ({ plugin: r.plugin, message: errorText(r.error) }));
    io.stdout.write(`${JSON.stringify({ node, plans, errors }, null, 2)}\n`);
  } else {
    const rows = results.flatMap((r) =>
      (r.plan?.workloads ?? []).map((w) => [r.plugin, w.name, w.owner, w.state, w.action, w.blocker ?? '']),
    );
    for (const r of results) {
      if (r.plan) {
        const where = r.plan.location ? ` (${r.plan.location})` : '';
        io.stdout.write(`${r.plugin}${where}: ${r.plan.workloads.length} workload(s) on node ${node}\n`);
        const c = r.plan.capacity;
        if (c) io.stdout.write(`  capacity: ${c.status === 'short' ? 'INSUFFICIENT: ' : ''}${c.message}\n`);
        for (const b of r.plan.blockers ?? []) io.stdout.write(`  BLOCKED (${b.kind}): ${b.message}\n`);
      }
    }
    if (rows.length > 0)
      io.stdout.write(renderTable(['PLUGIN', 'SERVER', 'PROJECT/OWNER', 'STATE', 'ACTION', 'BLOCKER'], rows));
    if (results.length === 0) io.stdout.write('no plugin is enabled: nothing to plan\n');
  }
  for (const r of failed) io.stderr.write(`error: ${r.plugin}: ${errorText(r.error)}\n`);
  if (failed.some((r) => isBadInput(r.error))) return ExitCode.badInput;
  return failed.length > 0 ? ExitCode.incomplete : ExitCode.ok;
}

export async function runPlan(argv: PlanArgs): Promise<number> {
  const config = await loadCliConfig(argv);
  const { io } = argv.cli;
  // The table and the error lines are the output; logs only for unexpected failures unless asked for.
  const log = cliLogger(config, io, quietUnlessAsked(config, 'error'));
  const host = new PluginHost({ plugins: plugins(config, argv, log), log });
  const node = nodeNameOf(config, io);
  const capacity = config.evacuation.capacityCheck !== 'off';
  return printPlan(node, await host.planAll({ name: node }, io.signal, { capacity }), argv.output, io);
}

export const command: CommandModule<GlobalArgs, PlanArgs> = {
  command: 'plan',
  describe: 'show what would move off the node and what blocks it (no changes)',
  builder: (y: Argv<GlobalArgs>) =>
    y.option('output', {
      alias: 'o',
      choices: ['table', 'json'] as const,
      default: 'table' as const,
    }),
  handler: handle(runPlan),
};
