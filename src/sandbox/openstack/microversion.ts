// Nova's microversion negotiation: `OpenStack-API-Version: compute 2.x`, the legacy
// `X-OpenStack-Nova-API-Version`, "latest", and 406 outside [min, max].
import type { IncomingHttpHeaders } from 'node:http';
import { HttpFault } from './http.ts';

const ERROR_TYPE = 'application/json; charset=UTF-8';

export interface Microversion {
  major: number;
  minor: number;
}

export function formatVersion(v: Microversion): string {
  return `${v.major}.${v.minor}`;
}

export function parseVersion(text: string): Microversion | undefined {
  const m = /^([1-9]\d*)\.([1-9]\d*|0)$/.exec(text.trim());
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]) };
}

export function compareVersions(a: Microversion, b: Microversion): number {
  return a.major - b.major || a.minor - b.minor;
}

/** True when `v` is at least 2.`minor`. */
export function atLeast(v: Microversion, minor: number): boolean {
  return v.major > 2 || (v.major === 2 && v.minor >= minor);
}

export function versionHeaders(text: string): Record<string, string | string[]> {
  return {
    'OpenStack-API-Version': `compute ${text}`,
    'X-OpenStack-Nova-API-Version': text,
    Vary: ['OpenStack-API-Version', 'X-OpenStack-Nova-API-Version'],
  };
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** The requested version text, or undefined when the client asked for none (→ 2.1). */
function requestedText(headers: IncomingHttpHeaders): string | undefined {
  const modern = headerValue(headers, 'openstack-api-version');
  if (modern !== undefined) {
    for (const part of modern.split(',')) {
      const [service, version] = part.trim().split(/\s+/, 2);
      if (service?.toLowerCase() === 'compute' && version !== undefined) return version;
    }
  }
  return headerValue(headers, 'x-openstack-nova-api-version')?.trim();
}

/** Resolves the request's microversion or throws Nova's 400/406 answer. */
export function negotiate(headers: IncomingHttpHeaders, min: Microversion, max: Microversion): Microversion {
  const text = requestedText(headers);
  if (text === undefined || text === '') return min;
  if (text.toLowerCase() === 'latest') return max;
  const v = parseVersion(text);
  if (!v) {
    throw new HttpFault({
      status: 400,
      headers: { 'Content-Type': ERROR_TYPE },
      body: {
        badRequest: {
          code: 400,
          message: `API Version String ${text} is of invalid format. Must be of format MajorNum.MinorNum.`,
        },
      },
    });
  }
  if (compareVersions(v, min) < 0 || compareVersions(v, max) > 0) {
    throw new HttpFault({
      status: 406,
      headers: { ...versionHeaders(formatVersion(v)), 'Content-Type': ERROR_TYPE },
      body: {
        computeFault: {
          code: 406,
          message: `Version ${formatVersion(v)} is not supported by the API. Minimum is ${formatVersion(min)} and maximum is ${formatVersion(max)}.`,
        },
      },
    });
  }
  return v;
}
