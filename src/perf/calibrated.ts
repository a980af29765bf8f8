import type { Efficiency } from './efficiency.ts';

/**
 * Roofline factors fitted by `llmfleet calibrate` (bundled data/profiles/splitwise_perf_model.csv, alternate grid
 * points, one set per device over llama2-70b tp 2/4/8 and bloom-176b tp 8), rounded to 3 digits; held-out error
 * in docs/fidelity/perf.md. test/perf/calibrate.test.ts re-runs the fit and checks these numbers still match.
 *
 * They describe the engine SplitwiseSim profiled (≈15–21 ms of fixed cost per iteration and ≈0.3 ms per sequence,
 * far more than a CUDA-graph vLLM), so a roofline on these devices reproduces that profile's step times. They are
 * used with `perf: { kind: roofline, calibrated: true }`; the default is the generic factors of efficiency.ts.
 * The power-capped `h100-80gb-pcap` rows are fitted too but have no catalog device, so they are not used here.
 */
export const CALIBRATED_EFFICIENCY: Readonly<Record<string, Efficiency>> = {
  'a100-80gb': {
    compute: 0.643,
    memory: 1,
    comm: 0.697,
    stepOverheadS: 0.021,
    prefillOverheadS: 0.0123,
    perSeqOverheadS: 0.00041,
    allReduceHopLatencyS: 6.44e-6,
    commKneeTokens: 1870,
    largeStepComm: 0.102,
  },
  'h100-80gb': {
    compute: 0.6,
    memory: 0.975,
    comm: 0.891,
    stepOverheadS: 0.0141,
    prefillOverheadS: 0.0106,
    perSeqOverheadS: 0.000304,
    allReduceHopLatencyS: 4.55e-6,
    commKneeTokens: 1430,
    largeStepComm: 0.167,
  },
};
