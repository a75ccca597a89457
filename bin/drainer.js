#!/usr/bin/env node
// Runs the built CLI when present (container image), else the TypeScript source (Node >= 22.18 strips types).
import { existsSync } from 'node:fs';
const built = new URL('../dist/cli.js', import.meta.url);
await import(existsSync(built) ? built.href : new URL('../src/cli.ts', import.meta.url).href);
