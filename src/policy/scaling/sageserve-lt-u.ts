import { sageserveScalingOptions } from '../sageserve/options.ts';
import { longTermScaler } from '../sageserve/scalers.ts';
import { defineScaler } from './types.ts';

/** LT-U: toward the hourly ILP target one instance per cooldown, out only above 70 %, in only below 30 % (see ../sageserve/scalers.ts). Options: ../sageserve/options.ts, shared by every SageServe scaler. */
export const sageserveLtU = defineScaler({
  options: sageserveScalingOptions,
  make(opts) {
    return longTermScaler('lt-u', opts);
  },
});
