// The command table: names and one-line descriptions only, so `drainer --help` and `drainer sandbox`
// start without loading the plugins, the Kubernetes clients or prom-client. A command's module (its options,
// handler and everything they import) is loaded when yargs picks that command.
import type { Argv, CommandModule } from 'yargs';
import type { CliContext, CliDeps } from './context.ts';

type AnyCommand = CommandModule<object, never>;

export interface CommandEntry {
  readonly command: string;
  readonly describe: string;
  /** Builds plugins (loads the registry and every plugin) before the handler runs. */
  readonly plugins: boolean;
  /** The module exporting the full yargs `command` (options, handler). */
  readonly load: () => Promise<{ readonly command: object }>;
}

export const commandTable: readonly CommandEntry[] = [
  {
    command: 'daemon',
    describe: 'watch this node (NODE_NAME): evacuate on cordon or NodeMaintenance, restore on uncordon',
    plugins: true,
    load: () => import('./daemon.ts'),
  },
  {
    command: 'run-once',
    describe:
      'evacuate the node (--node, $NODE_NAME or this host) once and exit: 0 all moved, 1 some stayed, 2 bad input',
    plugins: true,
    load: () => import('./run-once.ts'),
  },
  {
    command: 'restore',
    describe: 'put the node back in service: undo only what drainer changed (e.g. re-enable nova-compute)',
    plugins: true,
    load: () => import('./restore.ts'),
  },
  {
    command: 'release',
    describe:
      "release the node's drain gate now (drains go on although VMs may remain); held again on restore",
    plugins: false,
    load: () => import('./release.ts'),
  },
  {
    command: 'plan',
    describe:
      'the dry run of an evacuation (no changes): what would move, what blocks it; exit 0 would succeed, 3 refused, 1 unknown, 2 bad input',
    plugins: true,
    load: () => import('./plan.ts'),
  },
  {
    command: 'start <node>',
    describe:
      'cordon the node so drainer evacuates it; --now: past windows, freezes and blockers (not the budget)',
    plugins: false,
    load: () => import('./start.ts'),
  },
  {
    command: 'status',
    describe: 'show every node drainer is working on: phase, slot or queue place, progress, last error',
    plugins: false,
    load: () => import('./status.ts'),
  },
  {
    command: 'doctor',
    describe:
      "check drainer's promises against the live cluster and cloud (read-only): stranded services, gates, records without an agent; exit 0 all well, 3 findings, 1 could not look, 2 bad input",
    plugins: false,
    load: () => import('./doctor.ts'),
  },
  {
    command: 'config',
    describe: 'print the effective configuration (defaults < file < env < flags), secrets redacted',
    plugins: false,
    load: () => import('./config.ts'),
  },
  {
    command: 'sandbox',
    describe: 'run an embedded Kubernetes API, Keystone+Nova and KubeVirt simulation for trying drainer',
    plugins: false,
    load: () => import('./sandbox.ts'),
  },
  {
    command: 'demo',
    describe:
      'evacuate a node of the sandbox with one agent per node, live, then put it back (no cluster needed)',
    plugins: false,
    load: () => import('./demo.ts'),
  },
];

/** The backends' factory, loaded on first use: the registry pulls in every plugin. */
async function withPlugins(cli: CliContext, given: Partial<CliDeps>): Promise<void> {
  if (given.buildPlugins) return;
  const { buildPlugins } = await import('../plugins/registry.ts');
  cli.deps = { ...cli.deps, buildPlugins };
}

/** Runs an entry's handler: loads its module, and the plugins' registry first when it builds plugins. */
export async function runEntry(entry: CommandEntry, argv: { cli?: CliContext }, given: Partial<CliDeps>) {
  if (entry.plugins && argv.cli) await withPlugins(argv.cli, given);
  await ((await entry.load()).command as unknown as AnyCommand).handler(argv as never);
}

/** A yargs command whose builder and handler load the command's module on demand. */
export function lazyCommand(entry: CommandEntry, given: Partial<CliDeps>): AnyCommand {
  const real = async () => (await entry.load()).command as unknown as AnyCommand;
  return {
    command: entry.command,
    describe: entry.describe,
    builder: async (y: Argv) => {
      const b = (await real()).builder;
      if (typeof b === 'function') return b(y);
      return b ? y.options(b) : y;
    },
    handler: (argv: { cli?: CliContext }) => runEntry(entry, argv, given),
  } as unknown as AnyCommand;
}
