import type { TraceRequest } from '../workload/types.ts';

/** `migrating`: detached from one instance, its KV in transit to another (policy/routing migration, sim/migration.ts). */
export type RequestStatus = 'pending' | 'waiting' | 'running' | 'migrating' | 'done' | 'dropped' | 'aborted';

/**
 * A request inside the simulator: the trace fields plus the engine's progress counters. One class, one shape
 * (hot path). Policies may read `predictedOutputTokens`; only the engine reads `outputTokens`.
 */
export class SimRequest {
  readonly id: number;
  readonly arrivalS: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly model: string;
  readonly tier: string;
  readonly region: string;
  readonly app: string;
  readonly deadlineS: number;
  /** The prompt's block hashes and their block size (TraceRequest.prefixHashes); undefined: no prefix-cache hits. */
  readonly prefixHashes: readonly number[] | undefined;
  readonly prefixBlockTokens: number;
  /** What a policy believes the output length is (an oracle copy unless a predictor is configured). */
  predictedOutputTokens: number;

  status: RequestStatus = 'pending';
  instance = -1;
  /** Tokens to (re)compute before the next token is emitted: the prompt, or prompt + output so far after a preemption. */
  prefillTarget: number;
  prefilled = 0;
  generated = 0;
  /** Tokens whose KV entries are stored; after n emitted tokens and no preemption: prompt + n − 1. */
  kvTokens = 0;
  /** KV blocks this request holds alone (its shared prefix blocks are counted once, by the engine's prefix cache). */
  blocks = 0;
  /** With a prefix cache: the prompt tokens of the shared blocks it holds (`heldHashes`), not in `blocks`. */
  sharedTokens = 0;
  heldHashes: number[] | null = null;
  /** How many of its trace blocks from the first on it holds without a gap (the head of `heldHashes`). */
  heldLeading = 0;
  /** With a prefix cache: where its own blocks cached at its last release begin (after its cached trace blocks). */
  ownRunStart = 0;
  /** Splitwise-style reservation: tokens reserved on the instance (see scheduler-splitwise.ts). */
  reservedTokens = 0;
  firstScheduledS = -1;
  firstTokenS = -1;
  finishS = -1;
  preemptions = 0;
  /** Splitwise builder: rebuilds this request's prompt task, then its decode task, sat out (SplitwiseSim's per-task num_preemptions). */
  promptSkips = 0;
  decodeSkips = 0;
  /** Scratch mark of a batch builder (the rebuild that chose it). */
  buildMark = 0;
  dropReason = '';
  /** Priority 0 in the instance queue (SageServe: NIW older than 10 h); set by the queue, see scheduling/promotion.ts. */
  promoted = false;

  constructor(t: TraceRequest, defaultModel: string) {
    this.id = t.id;
    this.arrivalS = t.arrivalS;
    this.inputTokens = t.inputTokens;
    this.outputTokens = t.outputTokens;
    this.model = t.model ?? defaultModel;
    this.tier = t.tier ?? '';
    this.region = t.region ?? '';
    this.app = t.app ?? '';
    this.deadlineS = t.deadlineS ?? Infinity;
    this.prefixHashes = t.prefixHashes !== undefined && t.prefixHashes.length > 0 && (t.prefixBlockTokens ?? 0) > 0 ? t.prefixHashes : undefined;
    this.prefixBlockTokens = t.prefixBlockTokens ?? 0;
    this.predictedOutputTokens = t.outputTokens;
    this.prefillTarget = t.inputTokens;
  }

  get inPrefill(): boolean {
    return this.prefilled < this.prefillTarget;
  }
}
