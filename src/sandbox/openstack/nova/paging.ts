// Nova's collection paging: limit capped at osapi_max_limit, and a "next" link whenever a
// page is full (even when nothing follows, as Nova does), keeping the query with a new marker.
import type { NovaContext } from './context.ts';
import { badRequest } from './context.ts';

export function parseLimit(ctx: NovaContext): number {
  const raw = ctx.query.get('limit');
  if (raw === null) return ctx.maxLimit;
  if (!/^[0-9]*$/.test(raw)) {
    throw badRequest(
      `Invalid input for query parameters limit. Value: ${raw}. '${raw}' does not match '^[0-9]*$'`,
    );
  }
  return Math.min(Number(raw || ctx.maxLimit), ctx.maxLimit);
}

export function nextLink(ctx: NovaContext, path: string, marker: string): { rel: string; href: string }[] {
  const params = new URLSearchParams(ctx.query);
  params.set('marker', marker);
  return [{ rel: 'next', href: `${ctx.computeUrl}/${path}?${params.toString()}` }];
}
