// The VMs' owners: they act on their servers while drainer evacuates, through Nova's API as any
// project member would (the soak's owner is admin of its project): stop, start, shelve, unshelve,
// delete, resize (a migrate: Nova's resize to the same flavor, then its confirm), change a server's
// way out (drainer.dev:maintenance), and answer a `notify` by moving the server themselves.
// What they did is kept with its time on the API server's clock, and every power change of a server
// is told apart by who caused it: the owner (a stop or start they asked for) or else drainer.
import type { ObservedOwnerAction, ObservedPowerChange } from '../../src/invariants/world.ts';
import { MAINTENANCE_KEY } from '../../src/plugins/nova/policy.ts';
import type { Clock } from '../../src/sandbox/clock.ts';
import type { OpenStackSandbox } from '../../src/sandbox/openstack/index.ts';
import type { ServerView } from '../../src/sandbox/openstack/types.ts';
import type { Maintenances } from './maintenances.ts';
import type { Prng } from './prng.ts';

export const OWNER_ACTIONS = [
  'stop',
  'start',
  'shelve',
  'unshelve',
  'delete',
  'resize',
  'resize-race',
  'policy',
  'notify-move',
] as const;
export type OwnerActionKind = (typeof OWNER_ACTIONS)[number];

/** What the owners use of the fleet: Nova, and the sandbox's clock their actions are timed on. */
export interface OwnersFleet {
  readonly sandbox: { readonly openstack: OpenStackSandbox; readonly clock: Pick<Clock, 'now'> };
}

/** An owner's action as the soak counts it: done (Nova accepted it), refused by Nova, or nothing to act on. */
export interface OwnerOutcome {
  readonly action: OwnerActionKind;
  readonly server?: string;
  readonly status?: number;
}

const STOPPED = new Set(['SHUTOFF']);
const RUNNING = new Set(['ACTIVE']);

/** A tiny Nova client: the owner's token (password auth), then JSON calls at the newest microversion. */
class NovaOwner {
  readonly #fleet: OwnersFleet;
  #token: string | undefined;
  constructor(fleet: OwnersFleet) {
    this.#fleet = fleet;
  }

  async #auth(): Promise<string> {
    if (this.#token) return this.#token;
    const os = this.#fleet.sandbox.openstack;
    const c = os.credentials.admin;
    const res = await fetch(`${os.identityUrl}/auth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { id: c.userId, password: c.password } },
          },
          scope: { project: { id: c.projectId } },
        },
      }),
    });
    await res.text();
    this.#token = res.headers.get('x-subject-token') ?? '';
    return this.#token;
  }

  /** The call's status; a token that expired meanwhile (401) is renewed and the call made once more. */
  async call(method: string, path: string, body?: unknown): Promise<number> {
    const status = await this.#once(method, path, body);
    return status === 401 ? this.#once(method, path, body) : status;
  }

  async #once(method: string, path: string, body?: unknown): Promise<number> {
    const token = await this.#auth();
    const res = await fetch(`${this.#fleet.sandbox.openstack.computeUrl.replace(/\/$/, '')}${path}`, {
      method,
      headers: {
        'x-auth-token': token,
        'openstack-api-version': 'compute latest',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    await res.text();
    if (res.status === 401) this.#token = undefined;
    return res.status;
  }
}

export class Owners {
  readonly #fleet: OwnersFleet;
  readonly #maintenances: Maintenances;
  readonly #nova: NovaOwner;
  /** Servers whose owner asked to stop (or start) them, until the change is seen. */
  readonly #wants = new Map<string, 'stopped' | 'running'>();
  readonly #power = new Map<string, 'stopped' | 'running'>();
  /** Each server's way out (drainer.dev:maintenance) as its owner set it, by server name. */
  readonly #ways: Map<string, string>;
  readonly #actions: (ObservedOwnerAction & { maintenance?: number })[] = [];
  readonly powerChanges: ObservedPowerChange[] = [];
  readonly outcomes: OwnerOutcome[] = [];
  readonly #off: () => void;

  constructor(fleet: OwnersFleet, maintenances: Maintenances, ways: ReadonlyMap<string, string>) {
    this.#fleet = fleet;
    this.#ways = new Map(ways);
    this.#maintenances = maintenances;
    this.#nova = new NovaOwner(fleet);
    const os = fleet.sandbox.openstack.state;
    for (const s of os.servers()) this.#power.set(s.id, STOPPED.has(s.status) ? 'stopped' : 'running');
    this.#off = os.subscribe((e) => {
      if (e.kind === 'server') this.#seen(e.server);
    });
  }

  /** A server's power as Nova shows it now: who changed it, if it changed. */
  #seen(s: ServerView): void {
    const now = STOPPED.has(s.status) ? 'stopped' : RUNNING.has(s.status) ? 'running' : undefined;
    if (!now || this.#power.get(s.id) === now) return;
    this.#power.set(s.id, now);
    const by = this.#wants.get(s.id) === now ? 'owner' : 'drainer';
    if (by === 'owner') this.#wants.delete(s.id);
    this.powerChanges.push({
      serverId: s.id,
      name: s.name,
      to: now,
      by,
      at: this.#fleet.sandbox.clock.now(),
      ...(s.host ? { host: s.host } : {}),
    });
  }

  /** The owners' accepted actions, each with the end of the maintenance it was done in (an action in service ends at once). */
  get actions(): ObservedOwnerAction[] {
    return this.#actions.map(({ maintenance, ...a }) => {
      const until = maintenance === undefined ? a.at : this.#maintenances.endOf(maintenance);
      return { ...a, ...(until !== undefined ? { until } : {}) };
    });
  }

  /** Servers on nodes under evacuation (their node has a record), else every server: the owner acts mid-evacuation. */
  #candidates(ok: (s: ServerView) => boolean): ServerView[] {
    const all = this.#fleet.sandbox.openstack.state.servers().filter(ok);
    const busy = all.filter((s) => s.host && this.#maintenances.current(s.host) !== undefined);
    return (busy.length ? busy : all).sort((a, b) => a.name.localeCompare(b.name));
  }

  #note(action: OwnerActionKind, s: ServerView, status: number, at: number, detail?: string): OwnerOutcome {
    const accepted = status >= 200 && status < 300;
    const maintenance = s.host ? this.#maintenances.current(s.host) : undefined;
    if (accepted)
      this.#actions.push({
        serverId: s.id,
        name: s.name,
        // the invariants know a resize, however the owner timed it
        action: action === 'resize-race' ? 'resize' : action,
        at,
        ...(s.host ? { host: s.host } : {}),
        ...(detail ? { detail } : {}),
        ...(maintenance !== undefined ? { maintenance } : {}),
      });
    const out = { action, server: s.name, status };
    this.outcomes.push(out);
    return out;
  }

  /** The owner does `action` to one of its servers (picked with r); the answer is kept. */
  async act(action: OwnerActionKind, r: Prng): Promise<OwnerOutcome> {
    const pick = (ok: (s: ServerView) => boolean): ServerView | undefined => {
      const c = this.#candidates(ok);
      return c.length ? r.pick(c) : undefined;
    };
    // an ask is timed when it is made: Nova changes the server before its answer reaches the owner, and
    // a drain can return in between (chaos seed 13 round 7: a resize read after Nova's answer was
    // judged drainer's)
    const at = this.#fleet.sandbox.clock.now();
    const actionCall = (s: ServerView, body: unknown) =>
      this.#nova.call('POST', `/servers/${s.id}/action`, body);
    let s: ServerView | undefined;
    switch (action) {
      case 'stop': {
        s = pick((x) => x.status === 'ACTIVE' && !x.taskState);
        if (!s) break;
        this.#wants.set(s.id, 'stopped');
        const status = await actionCall(s, { 'os-stop': null });
        if (status >= 300) this.#wants.delete(s.id);
        return this.#note(action, s, status, at);
      }
      case 'start': {
        s = pick((x) => x.status === 'SHUTOFF' && !x.taskState);
        if (!s) break;
        this.#wants.set(s.id, 'running');
        const status = await actionCall(s, { 'os-start': null });
        if (status >= 300) this.#wants.delete(s.id);
        return this.#note(action, s, status, at);
      }
      case 'shelve':
        s = pick((x) => (x.status === 'ACTIVE' || x.status === 'SHUTOFF') && !x.taskState);
        if (!s) break;
        return this.#note(action, s, await actionCall(s, { shelve: null }), at);
      case 'unshelve': {
        s = pick((x) => x.status === 'SHELVED_OFFLOADED' || x.status === 'SHELVED');
        if (!s) break;
        this.#wants.set(s.id, 'running'); // an unshelved server runs: the owner's doing
        const status = await actionCall(s, { unshelve: null });
        if (status >= 300) this.#wants.delete(s.id);
        return this.#note(action, s, status, at);
      }
      case 'delete':
        s = pick((x) => !x.taskState);
        if (!s) break;
        return this.#note(action, s, await this.#nova.call('DELETE', `/servers/${s.id}`), at);
      case 'resize': {
        // Nova resizes a stopped server too (and keeps it stopped): one drainer stopped is fair game
        s = pick((x) => (x.status === 'ACTIVE' || x.status === 'SHUTOFF') && !x.taskState);
        if (!s) break;
        const status = await actionCall(s, { migrate: null });
        const server = s;
        if (status < 300) void this.#confirm(server, actionCall);
        return this.#note(action, s, status, at);
      }
      case 'resize-race': {
        // a real resize (another flavor), of a server drainer is moving off its host right now
        s = await this.#racing(r);
        if (!s) break;
        const asked = this.#fleet.sandbox.clock.now(); // now, not `at`: the wait for a server took seconds
        const status = await actionCall(s, { resize: { flavorRef: `flavor-c2-r${s.ramMb}-d23` } });
        const server = s;
        if (status < 300) void this.#confirm(server, actionCall);
        return this.#note(action, s, status, asked, 'flavor');
      }
      case 'policy': {
        s = pick(() => true);
        if (!s) break;
        const way = r.pick(['live', 'cold', 'notify'] as const);
        const status = await this.#nova.call('PUT', `/servers/${s.id}/metadata/${MAINTENANCE_KEY}`, {
          meta: { [MAINTENANCE_KEY]: way },
        });
        if (status < 300) this.#ways.set(s.name, way);
        return this.#note(action, s, status, at, way);
      }
      case 'notify-move': {
        // drainer asked: a notify server on a host being evacuated; its owner moves it away
        s = pick(
          (x) =>
            this.#ways.get(x.name) === 'notify' &&
            x.status === 'ACTIVE' &&
            !x.taskState &&
            !!x.host &&
            this.#hostDisabled(x.host),
        );
        if (!s) break;
        const status = await actionCall(s, { 'os-migrateLive': { host: null, block_migration: 'auto' } });
        return this.#note(action, s, status, at);
      }
    }
    const out = { action };
    this.outcomes.push(out);
    return out;
  }

  /**
   * The operator, told by drainer's EvacuationBlocked, asks the owners of the `stop` servers on a node
   * whose maintenance is no declared reboot to pick another way out; they choose `live`.
   */
  async unblock(node: string): Promise<OwnerOutcome[]> {
    const stops = this.#fleet.sandbox.openstack.state
      .serversOnHost(node)
      .filter((x) => x.metadata[MAINTENANCE_KEY] === 'stop');
    const out: OwnerOutcome[] = [];
    for (const s of stops) {
      const at = this.#fleet.sandbox.clock.now();
      const status = await this.#nova.call('PUT', `/servers/${s.id}/metadata/${MAINTENANCE_KEY}`, {
        meta: { [MAINTENANCE_KEY]: 'live' },
      });
      if (status < 300) this.#ways.set(s.name, 'live');
      out.push(this.#note('policy', s, status, at, 'live'));
    }
    return out;
  }

  /**
   * A server on a host drainer is evacuating (its nova-compute disabled), ACTIVE or SHUTOFF and
   * between tasks: drainer is about to move it, or between two attempts. Waits up to 4 s for one.
   */
  async #racing(r: Prng): Promise<ServerView | undefined> {
    for (let i = 0; i < 40; i++) {
      const c = this.#fleet.sandbox.openstack.state
        .servers()
        .filter(
          (x) =>
            (x.status === 'ACTIVE' || x.status === 'SHUTOFF') &&
            !x.taskState &&
            !!x.host &&
            this.#hostDisabled(x.host),
        )
        .sort((a, b) => a.name.localeCompare(b.name));
      if (c.length) return r.pick(c);
      await new Promise((res) => setTimeout(res, 100));
    }
    return undefined;
  }

  /**
   * The owner moves a server drainer stopped (its last power change was drainer's, it is SHUTOFF):
   * a resize to its own flavor (Nova's migrate), confirmed once Nova asks. Its new host, once it
   * landed (undefined: none to move, Nova refused, or it did not land within 6 s).
   */
  async moveStopped(r: Prng): Promise<string | undefined> {
    const stopped = this.#fleet.sandbox.openstack.state
      .servers()
      .filter(
        (x) =>
          x.status === 'SHUTOFF' &&
          !x.taskState &&
          this.powerChanges.findLast((c) => c.serverId === x.id)?.by === 'drainer',
      )
      .sort((a, b) => a.name.localeCompare(b.name));
    if (!stopped.length) return undefined;
    const s = r.pick(stopped);
    const from = s.host;
    const at = this.#fleet.sandbox.clock.now();
    const status = await this.#nova.call('POST', `/servers/${s.id}/action`, { migrate: null });
    this.#note('resize', s, status, at);
    if (status >= 300) return undefined;
    await this.#confirm(s, (x, body) => this.#nova.call('POST', `/servers/${x.id}/action`, body));
    for (let i = 0; i < 20; i++) {
      const now = this.#fleet.sandbox.openstack.state.server(s.id);
      if (now && now.host !== from && !now.taskState && now.status === 'SHUTOFF') return now.host;
      await new Promise((res) => setTimeout(res, 100));
    }
    return undefined;
  }

  #hostDisabled(host: string): boolean {
    return this.#fleet.sandbox.openstack.state.service(host)?.status === 'disabled';
  }

  /** The owner confirms its resize once Nova asks for it (VERIFY_RESIZE), within a few seconds. */
  async #confirm(s: ServerView, call: (s: ServerView, body: unknown) => Promise<number>): Promise<void> {
    for (let i = 0; i < 40; i++) {
      await new Promise((res) => setTimeout(res, 100));
      const now = this.#fleet.sandbox.openstack.state.server(s.id);
      if (!now) return;
      if (now.status === 'VERIFY_RESIZE') {
        await call(s, { confirmResize: null }).catch(() => undefined);
        return;
      }
    }
  }

  close(): void {
    this.#off();
  }
}
