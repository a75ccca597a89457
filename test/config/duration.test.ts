import { describe, expect, it } from 'vitest';
import { duration } from '../../src/config/duration.ts';

describe('duration', () => {
  it('reads numbers as seconds and unit strings as their seconds', () => {
    const d = duration();
    expect(d.parse(90)).toBe(90);
    expect(d.parse('90s')).toBe(90);
    expect(d.parse('10m')).toBe(600);
    expect(d.parse('1h')).toBe(3600);
    expect(d.parse('500ms')).toBe(0.5);
  });

  it('rejects negative numbers and unknown units with the value in the message', () => {
    const d = duration();
    expect(d.safeParse(-1).error?.issues[0]?.message).toMatch(/-1/);
    expect(d.safeParse('10 days').error?.issues[0]?.message).toMatch(/"10 days"/);
  });
});
