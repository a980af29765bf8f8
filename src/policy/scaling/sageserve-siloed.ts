import { sageserveScalingOptions } from '../sageserve/options.ts';
import { siloedScaler } from '../sageserve/scalers.ts';
import { defineScaler } from './types.ts';

/** Siloed pools (current O365 production): separate IW and NIW pools per endpoint, each reactive (see ../sageserve/scalers.ts). Options: ../sageserve/options.ts, shared by every SageServe scaler. */
export const sageserveSiloed = defineScaler({
  options: sageserveScalingOptions,
  make(opts) {
    return siloedScaler(opts);
  },
});
