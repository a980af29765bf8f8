import { sageserveScalingOptions } from '../sageserve/options.ts';
import { chironScaler } from '../sageserve/scalers.ts';
import { defineScaler } from './types.ts';

/** Chiron baseline: interactive backpressure (IBP > 0.6) over interactive + mixed pools and a batch drain-time rule for the batch pool (see ../sageserve/scalers.ts). Options: ../sageserve/options.ts, shared by every SageServe scaler. */
export const sageserveChiron = defineScaler({
  options: sageserveScalingOptions,
  make(opts) {
    return chironScaler(opts);
  },
});
