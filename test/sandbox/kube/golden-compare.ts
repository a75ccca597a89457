// Compares a sandbox answer with one recorded from a real kube-apiserver: the status code; for a
// Status its reason, code and causes' reasons; for objects and lists the field names and JSON
// types the recording holds (values may differ, placeholders match anything); for watches the
// event types and object kinds.
import type { Json } from './helpers.ts';

const PLACEHOLDER = /^<(uid|rv|time|microtime|managedFields)>$/;

/** A field the sandbox leaves out on purpose, with the reason. */
export interface Exception {
  readonly path: RegExp;
  /** Only in the exchanges whose name matches (default: all). */
  readonly exchanges?: RegExp;
  readonly reason: string;
}

const jsonType = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

function shape(want: Json, got: Json, path: string, out: string[], skip: readonly Exception[]): void {
  if (skip.some((e) => e.path.test(path))) return;
  if (typeof want === 'string' && PLACEHOLDER.test(want)) {
    if (got === undefined) out.push(`${path}: missing (recorded ${want})`);
    return;
  }
  if (got === undefined) {
    out.push(`${path}: missing`);
    return;
  }
  // Timestamps the real server serializes as null when unset may be absent or null here.
  if (jsonType(want) !== jsonType(got)) {
    out.push(`${path}: ${jsonType(got)} instead of ${jsonType(want)}`);
    return;
  }
  if (Array.isArray(want)) {
    if (want.length !== (got as unknown[]).length)
      out.push(`${path}: ${(got as unknown[]).length} items instead of ${want.length}`);
    want.forEach((w, i) => shape(w, (got as unknown[])[i], `${path}[${i}]`, out, skip));
  } else if (want && typeof want === 'object') {
    for (const [k, w] of Object.entries(want))
      shape(w, (got as Record<string, unknown>)[k], `${path}.${k}`, out, skip);
  }
}

function causes(s: Json): string[] {
  return ((s?.details?.causes ?? []) as { reason?: string }[]).map((c) => c.reason ?? '').sort();
}

/** Differences between the recorded answer and ours (empty when they agree). */
export function compareAnswer(
  recorded: { status: number; body: Json },
  ours: { status: number; body: Json },
  skip: readonly Exception[],
): string[] {
  const out: string[] = [];
  if (recorded.status !== ours.status) out.push(`status ${ours.status} instead of ${recorded.status}`);
  const want = recorded.body;
  const got = ours.body;
  if (want?.watchEvents) {
    const kinds = (evs: Json[]) => evs.map((e: Json) => `${e.type}:${e.object?.kind}`).join(',');
    const gotEvents = ((got?.watchEvents ?? []) as Json[]).slice(0, want.watchEvents.length);
    if (kinds(want.watchEvents) !== kinds(gotEvents))
      out.push(`watch events ${kinds(gotEvents)} instead of ${kinds(want.watchEvents)}`);
    want.watchEvents.forEach((e: Json, i: number) => {
      const o = gotEvents[i]?.object;
      if (e.object?.kind === 'Status') out.push(...compareStatus(e.object, o).map((d) => `event ${i}: ${d}`));
      else shape(e.object, o, `event[${i}]`, out, skip);
    });
    return out;
  }
  if (want?.kind === 'Status') out.push(...compareStatus(want, got));
  else shape(want, got, '', out, skip);
  return out;
}

function compareStatus(want: Json, got: Json): string[] {
  const out: string[] = [];
  if (got?.kind !== 'Status') return [`${jsonType(got)} ${got?.kind ?? ''} instead of a Status`];
  if (want.reason !== got.reason) out.push(`reason ${got.reason} instead of ${want.reason}`);
  if (want.code !== got.code) out.push(`code ${got.code} instead of ${want.code}`);
  if (causes(want).join() !== causes(got).join())
    out.push(`causes [${causes(got).join()}] instead of [${causes(want).join()}]`);
  return out;
}
