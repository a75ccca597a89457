// The fleet section: the cluster-wide budget, maintenance windows, freezes and blockers.
import * as z from './zod.ts';
import { duration } from './duration.ts';
import { budget, dflt, opt, section } from './schema-parts.ts';

const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

const hhmm = (end: boolean) =>
  z.string().check(
    z.refine((v) => /^([01]\d|2[0-3]):[0-5]\d$/.test(v) || (end && v === '24:00'), {
      message: `expected a local time "HH:MM" (00:00-23:59${end ? ', or 24:00' : ''})`,
    }),
  );

const timeZone = () =>
  z.string().check(
    z.refine(
      (v) => {
        try {
          new Intl.DateTimeFormat('en-US', { timeZone: v });
          return true;
        } catch {
          return false;
        }
      },
      { message: 'expected an IANA time zone such as "Europe/Berlin" or "UTC"' },
    ),
  );

const instant = () =>
  z.string().check(
    z.refine((v) => !Number.isNaN(Date.parse(v)), {
      message: 'expected a date and time such as "2026-12-24T00:00:00+01:00"',
    }),
  );

export const maintenanceWindowSchema = z.strictObject({
  days: z
    .array(
      z.enum(DAY_NAMES, { error: 'expected a three-letter day name: sun, mon, tue, wed, thu, fri or sat' }),
    )
    .check(z.minLength(1, 'expected at least one day')),
  start: hhmm(false),
  end: hhmm(true),
  timeZone: z._default(timeZone(), 'UTC'),
});

export const freezeSchema = z
  .strictObject({ from: instant(), to: instant(), reason: z.string().check(z.minLength(1)) })
  .check(
    z.refine((f) => Date.parse(f.to) > Date.parse(f.from), {
      message: '"to" must be after "from"',
      path: ['to'],
    }),
  );

export const prometheusBlockerSchema = z.strictObject({
  url: z.url().check(z.describe('Prometheus base URL (required); drainer asks GET <url>/api/v1/alerts')),
  alertName: dflt(
    z.string().check(
      z.refine(
        (v) => {
          try {
            new RegExp(v);
            return true;
          } catch {
            return false;
          }
        },
        { message: 'expected a regular expression' },
      ),
    ),
    '.*',
    'regular expression an alert name must match in full',
  ),
  labels: dflt(z.record(z.string(), z.string()), {}, 'labels a matching alert must carry (equal values)'),
  cacert: opt(z.string(), 'CA bundle file for an https URL (verification stays on)'),
  requestTimeout: dflt(duration(), 10, 'per-query timeout, seconds'),
});

export const blockersSchema = z.strictObject({
  prometheus: opt(
    prometheusBlockerSchema,
    'while a firing alert matches (GET <url>/api/v1/alerts), no evacuation starts; unreachable or a bad answer counts as blocked',
  ),
  podSelector: opt(
    z.string().check(z.minLength(1)),
    'label selector: while a matching pod runs on a node, that node does not start',
  ),
  interval: dflt(
    duration(),
    60,
    'how often blockers are evaluated: Prometheus at most once per interval for the whole fleet, pods once per interval per waiting node',
  ),
});

export const fleetSchema = z.strictObject({
  maxConcurrentEvacuations: dflt(
    budget(),
    1,
    'cluster-wide budget: how many nodes may be Evacuating at once; an integer, or a percentage ("10%") of the nodes running the agent (the DaemonSet\'s desiredNumberScheduled), rounded down, at least 1; 0: no limit',
  ),
  namespace: dflt(
    z.string().check(z.minLength(1)),
    'drainer',
    'namespace of the slot Leases drainer-evacuation-<i> (POD_NAMESPACE)',
  ),
  leaseDuration: dflt(
    duration(),
    30,
    'a slot whose holder has not renewed it for this long may be taken by another node, unless the holder is still Evacuating and its agent may come back (then also fleet.agentLeaseDuration)',
  ),
  agentLeaseDuration: dflt(
    duration(),
    300,
    'each agent holds the Lease drainer-node-<node> (renewed every half of this: 24 requests per node per hour at 300 s); a holder gone this long may be replaced, its fleet slot passes on if it was still Evacuating, and drainer status says the agent is gone',
  ),
  daemonSet: dflt(
    z.string().check(z.minLength(1)),
    'drainer',
    'the agent DaemonSet in the namespace, counted for percentage budgets',
  ),
  maintenanceWindows: dflt(
    z.array(maintenanceWindowSchema),
    [],
    'recurring windows {days: [sat, sun], start: "02:00", end: "06:00", timeZone: "Europe/Berlin"} in which evacuations may start; an end at or before the start crosses midnight; empty: always',
  ),
  freezes: dflt(
    z.array(freezeSchema),
    [],
    'absolute periods {from, to, reason} (ISO date-times) in which no evacuation starts',
  ),
  windowEnd: dflt(
    z.enum(['finish-running', 'start-queued']),
    'finish-running',
    'when a window closes running evacuations always finish; finish-running: queued nodes wait for the next window; start-queued: nodes queued inside the window still start',
  ),
  blockers: section(blockersSchema),
});
