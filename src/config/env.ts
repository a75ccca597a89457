// DRAINER_* environment variables, one per schema leaf: nova.maxConcurrentMigrations →
// DRAINER_NOVA_MAX_CONCURRENT_MIGRATIONS. Values are coerced by the leaf's type; records are JSON.
// Unknown DRAINER_* names never stop the agent (Kubernetes injects DRAINER_SERVICE_HOST,
// DRAINER_PORT… for a Service named "drainer"); the others get a warning (env-unknown.ts).
import type { ConfigIssue } from '../errors.ts';
import { type Layer, setPath } from './merge.ts';
import { isSecretKey, type Leaf, type LeafKind, leaves } from './schema-walk.ts';

const snake = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

export const envName = (path: readonly string[]): string => `DRAINER_${path.map(snake).join('_')}`;

type Coerced = { value: unknown } | { problem: string };

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/** Parses an env string as a boolean the way operators write it; undefined when it is none. */
export function parseBool(raw: string): boolean | undefined {
  const v = raw.trim().toLowerCase();
  return TRUE.has(v) ? true : FALSE.has(v) ? false : undefined;
}

function coerce(raw: string, kind: LeafKind, secret: boolean): Coerced {
  const shown = secret ? 'a secret value' : JSON.stringify(raw);
  switch (kind) {
    case 'boolean': {
      const b = parseBool(raw);
      return b === undefined ? { problem: `expected true or false, got ${shown}` } : { value: b };
    }
    case 'integer':
    case 'number': {
      const n = raw.trim() === '' ? NaN : Number(raw);
      return Number.isNaN(n) ? { problem: `expected a number, got ${shown}` } : { value: n };
    }
    case 'duration':
    case 'budget':
      return { value: /^\s*\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : raw };
    case 'record':
      try {
        const v: unknown = JSON.parse(raw);
        if (typeof v === 'object' && v !== null && !Array.isArray(v)) return { value: v };
      } catch {
        // reported below
      }
      return { problem: `expected a JSON object such as {"node-1":"compute-1"}` };
    case 'list':
      try {
        const v: unknown = JSON.parse(raw);
        if (Array.isArray(v)) return { value: v };
      } catch {
        // reported below
      }
      return { problem: 'expected a JSON list such as [{"days":["sat"],"start":"02:00","end":"06:00"}]' };
    default:
      return { value: raw };
  }
}

export interface EnvLayer {
  readonly layer: Layer;
  readonly issues: ConfigIssue[];
  /** Which variable set which key path (for error messages). */
  readonly sources: Map<string, string>;
}

export function readDrainerEnv(env: NodeJS.ProcessEnv, all: readonly Leaf[] = leaves()): EnvLayer {
  const layer: Layer = {};
  const issues: ConfigIssue[] = [];
  const sources = new Map<string, string>();
  for (const leaf of all) {
    const name = envName(leaf.path);
    const raw = env[name];
    if (raw === undefined) continue;
    const path = leaf.path.join('.');
    const c = coerce(raw, leaf.kind, leaf.path.some(isSecretKey));
    if ('problem' in c) issues.push({ path, message: `${c.problem} (in ${name})` });
    else setPath(layer, leaf.path, c.value);
    sources.set(path, name);
  }
  // Plain Kubernetes/ops conventions, below the explicit DRAINER_* names.
  if (env.NODE_NAME && env[envName(['nodeName'])] === undefined) {
    layer.nodeName = env.NODE_NAME;
    sources.set('nodeName', 'NODE_NAME');
  }
  if (env.POD_NAMESPACE && env[envName(['fleet', 'namespace'])] === undefined) {
    setPath(layer, ['fleet', 'namespace'], env.POD_NAMESPACE);
    sources.set('fleet.namespace', 'POD_NAMESPACE');
  }
  // the downward API names the pod: the holder of the node's Lease is this instance
  if (env.POD_NAME && env[envName(['instance'])] === undefined) {
    layer.instance = env.POD_UID ? `${env.POD_NAME}/${env.POD_UID}` : env.POD_NAME;
    sources.set('instance', env.POD_UID ? 'POD_NAME/POD_UID' : 'POD_NAME');
  }
  if (env.KUBECONFIG && env[envName(['kubeconfig'])] === undefined) {
    layer.kubeconfig = env.KUBECONFIG;
    sources.set('kubeconfig', 'KUBECONFIG');
  }
  return { layer, issues, sources };
}
