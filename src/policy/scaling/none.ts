import { z } from 'zod';
import type { ScalerEntry } from './types.ts';

/** The fleet stays as configured. */
export const none = {
  options: z.object({}).strict(),
  make() {
    return { name: 'none', decide: () => [{ kind: 'hold', reason: 'static fleet' }] };
  },
} satisfies ScalerEntry;
