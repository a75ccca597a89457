// Is KubeVirt installed, and with which settings: read from its CRs at each plan (it may come or
// go while the agent runs), said once when that changes.
import type { KubevirtConfig } from '../../config/schema.ts';
import { DrainerError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import type { KubevirtApi } from './port.ts';
import { clusterSettings } from './settings.ts';
import type { ClusterSettings } from './types.ts';

const PLAN_FRESH_MS = 30_000;

export interface InstalledDeps {
  readonly config: KubevirtConfig;
  readonly api: KubevirtApi;
  readonly log: Logger;
  readonly now: () => number;
}

export class Installed {
  readonly #deps: InstalledDeps;
  #reportedAbsent = false;
  /** The KubeVirt CRs as the last plan read them: its evacuate, right after, need not read them again. */
  #planned: { at: number; kubevirts: Awaited<ReturnType<KubevirtApi['listKubeVirts']>> } | undefined;

  constructor(deps: InstalledDeps) {
    this.#deps = deps;
  }

  /** The cluster's settings, or undefined while KubeVirt is not installed (an error if it is required). */
  async settings(signal: AbortSignal, planning = false): Promise<ClusterSettings | undefined> {
    const settings = clusterSettings(await this.#kubevirts(signal, planning));
    if (settings.installed) {
      // installed after the agent started (as often as before it): said once, as its absence was
      if (this.#reportedAbsent)
        this.#deps.log.info('KubeVirt is installed now: the kubevirt plugin moves VMIs from this plan on');
      this.#reportedAbsent = false;
      return settings;
    }
    if (this.#deps.config.required) {
      throw new DrainerError(
        'UNSUPPORTED',
        'KubeVirt is not installed (no KubeVirt CR found) but kubevirt.required is true',
      );
    }
    if (!this.#reportedAbsent) {
      this.#deps.log.info(
        'KubeVirt not installed: the kubevirt plugin has nothing to do until it is (looked for at each plan)',
      );
      this.#reportedAbsent = true;
    }
    return undefined;
  }

  /**
   * The KubeVirt CRs: a plan reads them; the evacuate that follows within PLAN_FRESH_MS uses that
   * read (its settings change on an operator's edit, not between a plan and its evacuation).
   */
  async #kubevirts(signal: AbortSignal, planning: boolean) {
    const planned = this.#planned;
    this.#planned = undefined;
    if (!planning && planned && this.#deps.now() - planned.at < PLAN_FRESH_MS) return planned.kubevirts;
    const kubevirts = await this.#deps.api.listKubeVirts(signal);
    if (planning) this.#planned = { at: this.#deps.now(), kubevirts };
    return kubevirts;
  }
}
