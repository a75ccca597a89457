// Rewrites the configuration reference in README.md from the schema: `npm run docs:config`.
import { readFileSync, writeFileSync } from 'node:fs';
import { referenceMarkdown } from '../src/config/reference.ts';
import { README_BEGIN, README_END } from '../src/config/reference.ts';

const path = new URL('../README.md', import.meta.url);
const text = readFileSync(path, 'utf8');
const start = text.indexOf(README_BEGIN);
const end = text.indexOf(README_END);
if (start < 0 || end < start) throw new Error(`README.md lacks the ${README_BEGIN} … ${README_END} markers`);
writeFileSync(
  path,
  text.slice(0, start + README_BEGIN.length) + '\n' + referenceMarkdown() + '\n' + text.slice(end),
);
