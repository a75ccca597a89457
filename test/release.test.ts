// What a release promises (docs/release.md): the image tag is the package version everywhere it is
// written, the changelog has a section for that version, and the license is the one package.json names.
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; license: string };

interface DaemonSet {
  spec: { template: { spec: { containers: { image: string }[] } } };
}

describe('release', () => {
  it('the DaemonSet runs the image tagged with the package version', () => {
    const ds = yaml.load(readFileSync('daemonset/daemonset.yaml', 'utf8')) as DaemonSet;
    const images = ds.spec.template.spec.containers.map((c) => c.image);
    expect(images).toEqual([`ghcr.io/drainer-dev/drainer:${pkg.version}`]);
  });

  it('the image carries the package version and license as OCI labels, and the LICENSE file', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8').replace(/\\\n/g, ' ');
    expect(dockerfile).toContain(`org.opencontainers.image.version="${pkg.version}"`);
    expect(dockerfile).toContain(`org.opencontainers.image.licenses="${pkg.license}"`);
    expect(dockerfile).toMatch(/^COPY LICENSE /m);
  });

  it("the README's build line tags the image with the package version", () => {
    const readme = readFileSync('README.md', 'utf8');
    const tags = [...readme.matchAll(/docker build -t \S+?\/drainer:(\S+?)[\s`]/g)].map((m) => m[1]);
    expect(tags.length).toBeGreaterThan(0);
    for (const t of tags) expect(t).toBe(pkg.version);
  });

  it('CHANGELOG.md has a section for the package version', () => {
    const changelog = readFileSync('CHANGELOG.md', 'utf8');
    expect(changelog).toMatch(new RegExp(`^## \\[${pkg.version.replace(/\./g, '\\.')}\\]`, 'm'));
  });

  it('LICENSE is the Apache License 2.0 that package.json names, in full', () => {
    const text = readFileSync('LICENSE', 'utf8');
    expect(pkg.license).toBe('Apache-2.0');
    expect(text).toMatch(/Apache License\s+Version 2\.0, January 2004/);
    expect(text).toContain('TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION');
    expect(text).toContain('END OF TERMS AND CONDITIONS');
    // all nine sections of the terms
    for (let n = 1; n <= 9; n++) expect(text).toMatch(new RegExp(`^\\s+${n}\\. [A-Z]`, 'm'));
  });
});
