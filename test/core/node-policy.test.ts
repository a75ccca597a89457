import { describe, expect, it } from 'vitest';
import { optedOut, optOutReason } from '../../src/core/agent/desired.ts';
import { migrationMode, nodeRef } from '../../src/core/backends/node-policy.ts';

const node = (labels: Record<string, string> = {}, annotations: Record<string, string> = {}) => ({
  metadata: { name: 'n1', labels, annotations },
});

describe("a node's own maintenance policy", () => {
  it('reads drainer.dev/migration-mode from a label or an annotation (the annotation wins), auto by default', () => {
    expect(migrationMode(node())).toEqual({ mode: 'auto' });
    expect(migrationMode(node({ 'drainer.dev/migration-mode': 'manual' }))).toEqual({ mode: 'manual' });
    expect(
      migrationMode(
        node({ 'drainer.dev/migration-mode': 'manual' }, { 'drainer.dev/migration-mode': 'skip' }),
      ),
    ).toEqual({ mode: 'skip' });
  });

  it('refuses a value it does not know with one line naming the node and the key', () => {
    expect(migrationMode(node({}, { 'drainer.dev/migration-mode': 'Manual' }))).toEqual({
      invalid: 'node n1: drainer.dev/migration-mode="Manual" is not one of auto, manual, skip',
    });
  });

  it('hands the plugins manual and a declared reboot, nothing for auto', () => {
    expect(nodeRef('n1', node())).toEqual({ name: 'n1' });
    expect(
      nodeRef('n1', node({ 'drainer.dev/reboot': 'true' }, { 'drainer.dev/migration-mode': 'manual' })),
    ).toEqual({ name: 'n1', mode: 'manual', reboot: true });
  });

  it('skip opts the node out as drainer.dev/ignore does, saying which', () => {
    expect(optOutReason(node({ 'drainer.dev/migration-mode': 'skip' }))).toBe(
      'has drainer.dev/migration-mode=skip',
    );
    expect(optOutReason(node({ 'drainer.dev/ignore': 'true' }))).toBe('is labelled drainer.dev/ignore=true');
    expect(optedOut(node({ 'drainer.dev/migration-mode': 'manual' }))).toBe(false);
  });
});
