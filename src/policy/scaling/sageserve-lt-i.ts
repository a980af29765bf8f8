import { sageserveScalingOptions } from '../sageserve/options.ts';
import { longTermScaler } from '../sageserve/scalers.ts';
import { defineScaler } from './types.ts';

/** LT-I: the hourly forecast → ILP target, applied at once (see ../sageserve/scalers.ts). Options: ../sageserve/options.ts, shared by every SageServe scaler. */
export const sageserveLtI = defineScaler({
  options: sageserveScalingOptions,
  make(opts) {
    return longTermScaler('lt-i', opts);
  },
});
