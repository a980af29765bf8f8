import { sageserveScalingOptions } from '../sageserve/options.ts';
import { reactiveScaler } from '../sageserve/scalers.ts';
import { defineScaler } from './types.ts';

/** Unified Reactive (the paper's main baseline): memory thresholds 70 % / 30 % per endpoint, 15 s cooldown, no wait for provisioning (see ../sageserve/scalers.ts). Options: ../sageserve/options.ts, shared by every SageServe scaler. */
export const sageserveReactive = defineScaler({
  options: sageserveScalingOptions,
  make(opts) {
    return reactiveScaler(opts);
  },
});
