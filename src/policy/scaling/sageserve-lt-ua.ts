import { sageserveScalingOptions } from '../sageserve/options.ts';
import { longTermScaler } from '../sageserve/scalers.ts';
import { defineScaler } from './types.ts';

/** LT-UA: LT-U plus the forecast-gap override (≥ 5× / ≤ 0.5×) in the last 20 min of each hour (see ../sageserve/scalers.ts). Options: ../sageserve/options.ts, shared by every SageServe scaler. */
export const sageserveLtUa = defineScaler({
  options: sageserveScalingOptions,
  make(opts) {
    return longTermScaler('lt-ua', opts);
  },
});
