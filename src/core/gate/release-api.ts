// What `drainer release` takes and answers (release.ts; release-keeperless.ts for a gate no agent keeps).
import type { Config } from '../../config/schema.ts';
import type { KubeClients } from '../../kube/client.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Remaining } from './remaining.ts';

export interface ReleaseOptions {
  readonly k: KubeClients;
  readonly config: Config;
  readonly node: string;
  readonly log: Logger;
  /** What the plugins find on the host now (asked after the node and its record are checked). */
  readonly remaining?: () => Promise<Remaining>;
  /** Release although VMs remain (or what remains is unknown). */
  readonly force?: boolean;
  readonly now?: () => Date;
}

export interface ReleaseResult {
  /** false: refused (VMs remain, or unknown, without force); nothing was changed. */
  readonly released: boolean;
  readonly lines: readonly string[];
}
