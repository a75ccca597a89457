// The options every command takes, in one table: yargs is built from it (parser.ts), and so is the
// daemon's own parse (daemon-args.ts), which starts the DaemonSet's agent without loading yargs.
import type { GlobalArgs } from './context.ts';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export type GlobalFlags = Omit<GlobalArgs, 'cli'>;

export interface GlobalFlag {
  /** The key yargs gives the value under (camelCase of the flag). */
  readonly key: keyof GlobalFlags;
  /** A one-letter alias (kubectl's -n). */
  readonly alias?: string;
  readonly type: 'string' | 'boolean';
  readonly choices?: readonly string[];
  readonly describe: string;
}

export const GLOBAL_FLAGS: Readonly<Record<string, GlobalFlag>> = {
  'config-path': {
    key: 'configPath',
    type: 'string',
    describe: 'config file (default ./config.yaml; a missing default file is fine)',
  },
  'log-level': {
    key: 'logLevel',
    type: 'string',
    choices: LOG_LEVELS,
    describe: 'log level (default info)',
  },
  'dry-run': { key: 'dryRun', type: 'boolean', describe: 'plan and log, change nothing' },
  node: {
    key: 'node',
    type: 'string',
    describe: 'node to act on (default $NODE_NAME, else the hostname)',
  },
  'evacuation-timeout': {
    key: 'evacuationTimeout',
    type: 'string',
    describe: 'deadline of the whole evacuation, e.g. 45m (the old -time-out=MINUTES maps here)',
  },
  // kubectl's own global flags, so `kubectl drainer status --kubeconfig … --context … -n …` works
  kubeconfig: {
    key: 'kubeconfig',
    type: 'string',
    describe: 'kubeconfig file (config kubeconfig, KUBECONFIG)',
  },
  context: {
    key: 'context',
    type: 'string',
    describe: "the kubeconfig's context to use (config kubeContext; default its current-context)",
  },
  namespace: {
    key: 'namespace',
    alias: 'n',
    type: 'string',
    describe: "drainer's namespace: its Leases and drain gates (config fleet.namespace, default drainer)",
  },
};
