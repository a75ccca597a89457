// `drainer demo`: the README's first command. Starts the sandbox with one agent per node, cordons a
// node, shows the evacuation live, uncordons and prints a summary; then a small fleet's two nodes
// are cordoned at once and one waits Queued for the fleet slot. Exit 0 when every node was
// evacuated and came back in service. The implementation (src/demo) loads only when this runs.
import { createWriteStream } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { ExitCode } from '../errors.ts';
import { createLogger } from '../observability/logger.ts';
import { handle, type GlobalArgs } from './context.ts';
import { refuseLive } from '../sandbox/state-dir.ts';
import { makeStateDir } from '../sandbox/make-dir.ts';

interface DemoArgs extends GlobalArgs {
  fleet: boolean;
  drain: boolean;
  keep?: boolean;
  scenario?: string;
  scale: number;
  'state-dir': string;
  timeout: number;
}

export const command: CommandModule<GlobalArgs, DemoArgs> = {
  command: 'demo',
  describe:
    'evacuate a node of the sandbox with one agent per node, live, then put it back (no cluster needed)',
  builder: (y: Argv<GlobalArgs>) =>
    y
      .option('fleet', {
        type: 'boolean',
        default: true,
        describe:
          'then cordon two nodes of a small fleet at once under fleet.maxConcurrentEvacuations: 1 (--no-fleet skips it)',
      })
      .option('drain', {
        type: 'boolean',
        default: true,
        describe:
          'then drain a node as kured or Cluster API do (kubectl drain when on PATH, else the Eviction API): it waits for the VMs (--no-drain skips it)',
      })
      .option('keep', {
        type: 'boolean',
        describe: 'leave the sandbox and agents running after the summary (Ctrl-C stops them)',
      })
      .option('scenario', {
        type: 'string',
        describe: 'scenario YAML file (default: scenarios/default.yaml)',
      })
      .option('scale', {
        type: 'number',
        default: 4,
        describe: 'simulated seconds per real second',
      })
      .option('state-dir', {
        type: 'string',
        default: '.sandbox',
        describe: "where kubeconfig, config.yaml and the agents' log (demo.log) are written",
      })
      .option('timeout', {
        type: 'number',
        default: 50,
        describe: 'real seconds the evacuation (and then the restore) may take',
      }),
  handler: handle(async (argv: DemoArgs) => {
    const { io } = argv.cli;
    const stateDir = resolve(io.cwd, argv['state-dir']);
    // a running sandbox's directory: refused before its demo.log is touched
    refuseLive(stateDir, argv['state-dir']);
    await makeStateDir(stateDir);
    const logPath = join(stateDir, 'demo.log');
    const logFile = createWriteStream(logPath);
    const log = createLogger({ level: argv.logLevel ?? 'info', destination: logFile });
    try {
      const { runDemo } = await import('../demo/run.ts');
      const { kubectlOnPath } = await import('../demo/drain-act.ts');
      const rel = relative(io.cwd, logPath);
      io.stdout.write(`agents' log: ${rel.startsWith('..') ? logPath : rel}\n`);
      const report = await runDemo({
        out: io.stdout,
        log,
        signal: io.signal,
        ...(argv.scenario ? { scenario: resolve(io.cwd, argv.scenario) } : {}),
        ...(argv.node ? { node: argv.node } : {}),
        scale: argv.scale,
        stateDir,
        cwd: io.cwd,
        keep: argv.keep === true,
        timeoutSeconds: argv.timeout,
        fleet: argv.fleet,
        ...(argv.drain ? { drain: kubectlOnPath(io.env.PATH) } : {}),
      });
      return report.ok ? ExitCode.ok : ExitCode.incomplete;
    } finally {
      await new Promise((done) => logFile.end(done));
    }
  }),
};
