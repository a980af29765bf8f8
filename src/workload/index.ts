/** The workload layer's public surface: trace readers, transforms, generators, the scenario schema. */
export { TRACE_FORMATS, type TraceFormat, type TraceRequest, type RequestSource } from './types.ts';
export { openTrace, detectFormat, readers, type TraceSource, type TraceOptions } from './trace.ts';
export type { TraceStats, TraceReader } from './readers/reader.ts';
export { LineReader, DEFAULT_CHUNK_BYTES, type LineReaderOptions } from './line-reader.ts';
export { applyTransforms, spreadTies, timeWindow, compress, rateScale, limit, type TransformSpec } from './transforms.ts';
export { synthetic, type SyntheticOptions } from './generators/synthetic.ts';
export { arrivalTimes, rateAt, maxRate, type ArrivalSpec } from './generators/arrivals.ts';
export {
  fitEmpirical,
  fitLognormal,
  lengthSampler,
  type EmpiricalLengths,
  type LengthModel,
  type LognormalSide,
} from './generators/lengths.ts';
export { labelPicker, LABEL_KEYS, type LabelSpec, type LabelsSpec } from './generators/labels.ts';
export { workloadSchema, openWorkload, type WorkloadSpec } from './schema.ts';
