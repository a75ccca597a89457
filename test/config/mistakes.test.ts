// The config mistakes an operator makes on the third day (issue 37), each one line that names the
// key and echoes what was given (never a secret): a typo gets "did you mean" as a DRAINER_* typo
// does, a time zone that is none is echoed, a key written twice is named, and a duration key takes
// "2m" (drainGate.holdTimeout did not).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { world } from './helpers.ts';

async function lines(text: string): Promise<string[]> {
  const w = world();
  w.write(path.join(w.cwd, 'config.yaml'), text);
  const err = await w.load().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return (err as ConfigError).message.split('\n').map((l) => l.replace(w.cwd, '.'));
}

describe('config mistakes: one line each, naming the key', () => {
  it('a mistyped key gets the nearest one', async () => {
    expect(await lines('nova:\n  retrys: 3\n')).toEqual([
      'nova.retrys: unknown key (did you mean "retries"?) (in ./config.yaml)',
    ]);
    expect(await lines('drainGate:\n  holdTimout: 2m\n')).toEqual([
      'drainGate.holdTimout: unknown key (did you mean "holdTimeout"?) (in ./config.yaml)',
    ]);
    // nothing near: no guess
    expect(await lines('nova:\n  frobnicate: 1\n')).toEqual([
      'nova.frobnicate: unknown key (in ./config.yaml)',
    ]);
  });

  it('a time zone that is none is echoed', async () => {
    expect(
      await lines(
        'fleet:\n  maintenanceWindows:\n    - {days: [sat], start: "02:00", end: "06:00", timeZone: Europe/Berln}\n',
      ),
    ).toEqual([
      'fleet.maintenanceWindows.0.timeZone: expected an IANA time zone such as "Europe/Berlin" or "UTC", got "Europe/Berln" (in ./config.yaml)',
    ]);
  });

  it('a key written twice is named, and the value of a secret one is not shown', async () => {
    expect(await lines('nova:\n  retries: 2\n  retries: 4\n')).toEqual([
      './config.yaml: YAML syntax error at line 3, column 3: the key "retries" appears twice in one mapping',
    ]);
    const secret = await lines('openstack:\n  auth:\n    password: one\n    password: "hunter2"\n');
    expect(secret).toEqual([
      './config.yaml: YAML syntax error at line 4, column 5: the key "password" appears twice in one mapping',
    ]);
  });

  it('drainGate.holdTimeout takes a duration such as "2m", within its bounds', async () => {
    const w = world();
    w.write(path.join(w.cwd, 'config.yaml'), 'drainGate:\n  holdTimeout: 2m\n');
    expect((await w.load()).drainGate.holdTimeout).toBe(120);
    expect(await lines('drainGate:\n  holdTimeout: 2d\n')).toEqual([
      'drainGate.holdTimeout: expected a duration like "90s", "10m" or a number of seconds, got "2d" (in ./config.yaml)',
    ]);
    expect(await lines('drainGate:\n  holdTimeout: 48h\n')).toEqual([
      'drainGate.holdTimeout: expected a duration from 1 s to 86400 s, got "48h" (in ./config.yaml)',
    ]);
  });
});
