import type { Actuator } from './types.ts';

/** Decides and logs, changes nothing: the decision log is the whole output (shadow mode). */
export function advisoryActuator(): Actuator {
  return {
    kind: 'advisory',
    pending: () => 0,
    add: async (pool, count) => `advisory: would add ${count} to ${pool.name}`,
    remove: async (pool, count) => `advisory: would remove ${count} from ${pool.name}`,
    close: async () => {},
  };
}
