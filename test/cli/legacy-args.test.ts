import { describe, expect, it } from 'vitest';
import { normalizeLegacyArgs } from '../../src/cli/legacy-args.ts';

describe('normalizeLegacyArgs', () => {
  it('turns --daemon and the Go tool’s -daemon into the daemon command', () => {
    expect(normalizeLegacyArgs(['--daemon'])).toEqual(['daemon']);
    expect(normalizeLegacyArgs(['-daemon', '--log-level', 'debug'])).toEqual([
      'daemon',
      '--log-level',
      'debug',
    ]);
    expect(normalizeLegacyArgs(['-daemon=true'])).toEqual(['daemon']);
    expect(normalizeLegacyArgs(['-daemon=false', 'plan'])).toEqual(['plan']);
  });

  it('maps -config-path in both Go spellings onto --config-path', () => {
    expect(normalizeLegacyArgs(['-config-path=/etc/drain.yaml', 'plan'])).toEqual([
      '--config-path',
      '/etc/drain.yaml',
      'plan',
    ]);
    expect(normalizeLegacyArgs(['-daemon', '-config-path', '/etc/drain.yaml'])).toEqual([
      'daemon',
      '--config-path',
      '/etc/drain.yaml',
    ]);
  });

  it('reads -time-out as minutes and maps it onto --evacuation-timeout', () => {
    expect(normalizeLegacyArgs(['-time-out=5', 'run-once'])).toEqual([
      '--evacuation-timeout',
      '5m',
      'run-once',
    ]);
    expect(normalizeLegacyArgs(['--time-out', '90'])).toEqual(['--evacuation-timeout', '90m']);
  });

  it('leaves our own flags and anything after -- alone', () => {
    const args = ['run-once', '--node', 'n1', '--dry-run', '--', '-daemon'];
    expect(normalizeLegacyArgs(args)).toEqual(args);
  });
});
