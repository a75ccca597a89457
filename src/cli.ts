#!/usr/bin/env node
// The bin entry: every command lives in src/cli/<name>.ts and exports `command`.
import { main, programName } from './cli/main.ts';

process.exitCode = await main(process.argv.slice(2), { program: programName(process.argv[1]) });
