// `drainer sandbox`: runs the embedded Kubernetes API, Keystone+Nova and KubeVirt simulation until
// Ctrl-C, with a kubeconfig and a drainer config written to the state directory.
import { relative, resolve } from 'node:path';
import type { CommandModule } from 'yargs';
import { ConfigError, ExitCode } from '../errors.ts';
import { createLogger } from '../observability/logger.ts';
import type { Sandbox } from '../sandbox/index.ts';
import { handle, type GlobalArgs } from './context.ts';

interface SandboxArgs extends GlobalArgs {
  scenario?: string;
  port?: string;
  'state-dir': string;
}

/** The paths as the user should type them: relative to the cwd when inside it. */
const shown = (p: string, cwd: string): string => {
  const rel = relative(cwd, p);
  return rel && !rel.startsWith('..') ? rel : p;
};

export function usage(sb: Sandbox, cwd: string): string {
  const kc = shown(sb.kubeconfigPath ?? '', cwd);
  const cfg = shown(sb.configPath ?? '', cwd);
  const s = sb.scenario;
  const node = s.nodes[0]?.name ?? 'node-1';
  const vms = s.kubevirt.installed ? `, ${s.kubevirt.vmis.length} VMIs` : '';
  return [
    `drainer sandbox is running (scenario "${s.name}": ${s.nodes.length} nodes, ${s.openstack.servers.length} Nova servers${vms})`,
    `  Kubernetes API  ${sb.kube.url}`,
    `  Keystone        ${sb.openstack.identityUrl}`,
    `  Nova            ${sb.openstack.computeUrl}`,
    `  kubeconfig      ${kc}`,
    `  drainer config  ${cfg}`,
    '',
    'Try:',
    `  kubectl --kubeconfig ${kc} get nodes`,
    `  kubectl --kubeconfig ${kc} get pods -A -o wide`,
    s.kubevirt.installed ? `  kubectl --kubeconfig ${kc} get vmi,vmim -A` : '',
    `  NODE_NAME=${node} npx drainer daemon --config-path ${cfg}    # in another terminal, in this checkout`,
    `  kubectl --kubeconfig ${kc} cordon ${node}                  # drainer evacuates ${node}`,
    `  kubectl --kubeconfig ${kc} uncordon ${node}                # and puts it back`,
    '',
    'Ctrl-C stops the sandbox.',
    '',
  ]
    .filter((l, i, all) => l !== '' || all[i - 1] !== '')
    .join('\n');
}

const PORT_HELP = 'the Kubernetes API takes it and Keystone+Nova the next one; leave it out for free ports';

/** --port as given: a whole number from 1 to 65534 (its next one is Keystone+Nova's), else one line. */
export function portOf(text: string): number {
  const port = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (Number.isInteger(port) && port >= 1 && port <= 65534) return port;
  throw new ConfigError([
    { path: '--port', message: `${text} is not a port from 1 to 65534 (${PORT_HELP})` },
  ]);
}

/** A port of the two taken by another program: which one, and why the sandbox wanted it. */
function portInUse(err: unknown, port: number): ConfigError | undefined {
  const e = err as { code?: string; port?: number };
  if (e.code !== 'EADDRINUSE' && e.code !== 'EACCES') return undefined;
  const which =
    e.port === port + 1 ? `${port + 1} (Keystone+Nova take the port after --port ${port})` : `${port}`;
  const why = e.code === 'EACCES' ? 'may not be used by this user' : 'is in use';
  return new ConfigError([
    { path: '--port', message: `127.0.0.1:${which} ${why}: pick another --port (${PORT_HELP})` },
  ]);
}

/** Resolves when the signal aborts (SIGINT/SIGTERM in the process). */
const until = (signal: AbortSignal): Promise<void> =>
  new Promise((done) => {
    if (signal.aborted) done();
    else signal.addEventListener('abort', () => done(), { once: true });
  });

export const command: CommandModule<object, SandboxArgs> = {
  command: 'sandbox',
  describe: 'run an embedded Kubernetes API, Keystone+Nova and KubeVirt simulation for trying drainer',
  builder: (y) =>
    y
      .option('scenario', {
        type: 'string',
        describe: 'scenario YAML file (default: scenarios/default.yaml)',
      })
      .option('port', {
        type: 'string',
        describe: 'Kubernetes API port (Keystone+Nova take the next one); default: free ports',
      })
      .option('state-dir', {
        type: 'string',
        default: '.sandbox',
        describe: 'where kubeconfig and config.yaml are written',
      }) as never,
  handler: handle(async (args: SandboxArgs) => {
    const { io } = args.cli;
    const port = args.port === undefined ? undefined : portOf(args.port);
    const log = createLogger({
      level: args.logLevel ?? 'warn',
      destination: { write: (line: string) => void io.stderr.write(line) },
    });
    // Loaded here, not at the top: other commands need none of the sandbox.
    const { startSandbox } = await import('../sandbox/index.ts');
    const sb = await startSandbox({
      ...(args.scenario ? { scenario: resolve(io.cwd, args.scenario) } : {}),
      ...(port ? { kubePort: port, openstackPort: port + 1 } : {}),
      stateDir: resolve(io.cwd, args['state-dir']),
      log,
    }).catch((err: unknown) => {
      throw port ? (portInUse(err, port) ?? err) : err;
    });
    io.stdout.write(usage(sb, io.cwd));
    await until(io.signal);
    io.stdout.write('\nstopping the sandbox\n');
    await sb.close();
    return ExitCode.ok;
  }),
};
