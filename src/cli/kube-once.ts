// The Kubernetes path of `drainer run-once` (restore.ts calls core/agent/once.ts directly): when
// Kubernetes access is configured (kubeconfig, KUBECONFIG or in-cluster), run the agent's reconcile
// of the node once, so the record lands on the Node and a daemon later resumes or undoes this work.
import { kubeTarget } from '../config/kube-target.ts';
import type { Config } from '../config/schema.ts';
import { describeRecord, evacuateOnce, type OnceOptions } from '../core/agent/once.ts';
import type { BackendPlugin } from '../core/backends/plugin.ts';
import { createKubeClients, type KubeClients } from '../kube/client.ts';
import type { KubeHttpOptions } from '../kube/http.ts';
import { targetOptions } from '../kube/target-options.ts';
import type { Logger } from '../observability/logger.ts';
import type { CliIo } from './context.ts';

/** Clients when Kubernetes access is configured explicitly; never guessed from ~/.kube/config. */
export function kubeIfConfigured(
  config: Config,
  env: NodeJS.ProcessEnv,
  http?: KubeHttpOptions,
): KubeClients | undefined {
  const target = kubeTarget(config, env);
  if (target.source === 'default kubeconfig') return undefined;
  return createKubeClients({ ...targetOptions(target), ...(http ? { http } : {}) });
}

export interface KubeOnceInput {
  readonly config: Config;
  readonly io: CliIo;
  readonly log: Logger;
  readonly node: string;
  readonly k: KubeClients;
  readonly plugins: readonly BackendPlugin[];
}

/** run-once: 0 Evacuated, 1 Failed/incomplete (the record's lines say why). */
export async function runOnceOnKubernetes(
  input: KubeOnceInput & Pick<OnceOptions, 'noBudget' | 'force' | 'onWait'> & { cordon: boolean },
): Promise<number> {
  const rec = await evacuateOnce({ ...input, signal: input.io.signal });
  const { lines, code } = describeRecord(input.node, rec);
  for (const line of lines) input.io.stdout.write(`${line}\n`);
  return input.io.signal.aborted ? 1 : code;
}
