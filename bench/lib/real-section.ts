// The "## real guests" section of BENCHMARKS.md: measured apart on the libvirt stack
// (bench/real-guests.ts, kept in bench/real-guests.md) and put back after every full `npm run bench`.
import { readFile, writeFile } from 'node:fs/promises';

/** Replaces (or appends) the "## real guests" section of BENCHMARKS.md. */
export async function spliceInto(file: string, section: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  const at = text.indexOf('\n## real guests\n');
  const head = at < 0 ? text.trimEnd() : text.slice(0, at).trimEnd();
  const rest =
    at < 0
      ? ''
      : text
          .slice(at + 1)
          .replace(/^## real guests\n[\s\S]*?(?=\n## |$)/, '')
          .trimStart();
  await writeFile(file, `${head}\n\n${section.trimEnd()}\n${rest ? `\n${rest}` : ''}`);
}
