#!/usr/bin/env node
// The CLI runs the TypeScript sources directly through tsx: no build step, never a stale build.
import { register } from 'tsx/esm/api';
register();
const { main } = await import('../src/cli/main.ts');
await main(process.argv);
