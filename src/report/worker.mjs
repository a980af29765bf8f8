// Piscina worker entry. Worker threads do not inherit the loader hooks that bin/llmfleet.js registers, so
// this plain-JS file registers tsx itself and then loads the TypeScript module that does the work.
import { register } from 'tsx/esm/api';

register();
const { runVariantTask } = await import('./run-variant.ts');

export default function run(task) {
  return runVariantTask(task);
}
