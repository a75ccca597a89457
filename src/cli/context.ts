// What every command gets: injected streams/env/dirs (tests run main() in-process), the config
// loader, logger and plugin construction, and the one error → exit code mapping.
import os from 'node:os';
import { loadConfig, type Flags } from '../config/load.ts';
import { processEnv } from '../config/process-env.ts';
import type { Config } from '../config/schema.ts';
import { ExitCode, isBadInput } from '../errors.ts';
import type { BackendPlugin } from '../core/backends/plugin.ts';
import type { KubeClients } from '../kube/client.ts';
import type { KubeHttpOptions } from '../kube/http.ts';
import { errorLines, wantsStack } from './error-lines.ts';
import { createLogger, type Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { RegistryDeps } from '../plugins/registry.ts';

import type { OutStream } from '../output/stream.ts';

export type { OutStream };

export interface CliIo {
  stdout: OutStream;
  stderr: OutStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  homeDir: string;
  /** openstacksdk's site directory (/etc/openstack). */
  etcDir: string;
  hostname: () => string;
  /** Aborted on SIGINT/SIGTERM (the process) or by a test. */
  signal: AbortSignal;
}

export interface CliDeps {
  /** Builds the backends (tests inject fakes; default: plugins/registry.ts). */
  buildPlugins: (config: Config, deps: RegistryDeps) => BackendPlugin[];
}

/** Merged into argv by main(), so every handler reaches the same io and deps. */
export interface CliContext {
  io: CliIo;
  deps: CliDeps;
  exitCode: number;
}

export interface GlobalArgs {
  configPath?: string;
  logLevel?: string;
  dryRun?: boolean;
  node?: string;
  evacuationTimeout?: string;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  cli: CliContext;
}

export function defaultIo(signal: AbortSignal): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: processEnv(),
    cwd: process.cwd(),
    homeDir: os.homedir(),
    etcDir: '/etc/openstack',
    hostname: () => os.hostname(),
    signal,
  };
}

/**
 * The registry (every plugin) is loaded by commands.ts for the commands that build
 * plugins; the others never call this.
 */
export const defaultDeps: CliDeps = {
  buildPlugins: () => {
    throw new Error('internal: this command loads no plugins');
  },
};

export function flagsOf(argv: GlobalArgs): Partial<Flags> {
  const flags: Partial<Flags> = {};
  if (argv.configPath !== undefined) flags.configPath = argv.configPath;
  if (argv.logLevel !== undefined) flags.logLevel = argv.logLevel;
  if (argv.dryRun !== undefined) flags.dryRun = argv.dryRun;
  if (argv.node !== undefined) flags.node = argv.node;
  if (argv.evacuationTimeout !== undefined) flags.evacuationTimeout = argv.evacuationTimeout;
  if (argv.kubeconfig !== undefined) flags.kubeconfig = argv.kubeconfig;
  if (argv.context !== undefined) flags.context = argv.context;
  if (argv.namespace !== undefined) flags.namespace = argv.namespace;
  return flags;
}

export function loadCliConfig(argv: GlobalArgs): Promise<Config> {
  const { io } = argv.cli;
  return loadConfig({
    argv: flagsOf(argv),
    env: io.env,
    cwd: io.cwd,
    homeDir: io.homeDir,
    etcDir: io.etcDir,
    onWarning: (text) => void io.stderr.write(`warning: ${text}\n`),
  });
}

/** JSON logs on stderr, so stdout stays clean for tables, YAML and JSON output. */
export function cliLogger(config: Config, io: CliIo, level = config.logLevel): Logger {
  return createLogger({ level, destination: { write: (line: string) => void io.stderr.write(line) } });
}

/** `level` when the log level is still the default (no flag, env or file set it); else the one asked for. */
export const quietUnlessAsked = (config: Config, level: Config['logLevel']): Config['logLevel'] =>
  config.logLevel === 'info' ? level : config.logLevel;

/** The node to act on: --node, else config nodeName (NODE_NAME), else this host's name. */
export const nodeNameOf = (config: Config, io: CliIo): string => config.nodeName ?? io.hostname();

export function plugins(config: Config, argv: GlobalArgs, log: Logger, metrics?: Metrics): BackendPlugin[] {
  return argv.cli.deps.buildPlugins(config, { log, ...(metrics ? { metrics } : {}) });
}

/** The CLI's Kubernetes requests: config.kubeRequestTimeout, and a request silent for 5 s is said on stderr. */
export const kubeHttp = (config: Config, io: CliIo): KubeHttpOptions => ({
  timeoutMs: config.kubeRequestTimeout * 1000,
  onSlow: (text) => void io.stderr.write(`${text}\n`),
});

/** A command's plugins, with the Kubernetes clients when it has them; a cloud request silent for 5 s is said on stderr. */
export function commandPlugins(
  argv: GlobalArgs,
  config: Config,
  log: Logger,
  kube?: KubeClients,
): BackendPlugin[] {
  const onSlow = (text: string) => void argv.cli.io.stderr.write(`${text}\n`);
  return argv.cli.deps.buildPlugins(config, { log, onSlow, ...(kube ? { kube } : {}) });
}

/** Prints an error for a person (one line per problem; the stack only at --log-level debug) and returns its exit code. */
export function reportError(e: unknown, io: CliIo, logLevel?: string): number {
  for (const line of errorLines(e, { stack: wantsStack(logLevel) })) io.stderr.write(`${line}\n`);
  return isBadInput(e) ? ExitCode.badInput : ExitCode.incomplete;
}

/** Wraps a command handler: its result or its error becomes ctx.exitCode. */
export function handle<A extends GlobalArgs>(fn: (argv: A) => Promise<number>): (argv: A) => Promise<void> {
  return async (argv) => {
    try {
      argv.cli.exitCode = await fn(argv);
    } catch (e) {
      argv.cli.exitCode = reportError(e, argv.cli.io, argv.logLevel);
    }
  };
}
