// Reading a scenario: YAML file or object → validated Scenario, or a ConfigError naming each bad path.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import type { z } from 'zod';
import { ConfigError, type ConfigIssue } from '../errors.ts';
import { scenarioSchema, type Scenario } from './scenario.ts';

/**
 * The scenario that ships with drainer, in scenarios/ at the package root: the nearest one above this
 * module, which is src/sandbox/ in the source tree and a chunk somewhere under dist/ in the bundle.
 */
function shippedScenario(): string {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    const candidate = join(dir, 'scenarios', 'default.yaml');
    if (existsSync(candidate) || dirname(dir) === dir) return candidate;
  }
}
export const defaultScenarioPath = shippedScenario();

/** "nodes[2].taints[0].effect" */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out;
}

function issuesOf(error: z.ZodError, origin: string | undefined): ConfigIssue[] {
  const prefix = origin ? `${origin}: ` : '';
  return error.issues.map((i) => ({
    path: `${prefix}${formatPath(i.path) || '(root)'}`,
    message: i.message,
  }));
}

/** Validates an already-parsed scenario object. */
export function parseScenario(input: unknown, origin?: string): Scenario {
  const result = scenarioSchema.safeParse(input);
  if (!result.success) throw new ConfigError(issuesOf(result.error, origin));
  return result.data;
}

/** Reads and validates a scenario YAML file. */
export async function loadScenarioFile(path: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new ConfigError([{ path, message: `cannot read scenario: ${(e as Error).message}` }], { cause: e });
  }
  let doc: unknown;
  try {
    doc = yaml.load(text);
  } catch (e) {
    throw new ConfigError([{ path, message: `invalid YAML: ${(e as Error).message}` }], { cause: e });
  }
  return parseScenario(doc, path);
}

/** A path, an object (validated) or nothing (the default scenario). */
export async function resolveScenario(source: string | object | undefined): Promise<Scenario> {
  if (source === undefined) return loadScenarioFile(defaultScenarioPath);
  if (typeof source === 'string') return loadScenarioFile(source);
  return parseScenario(source);
}
