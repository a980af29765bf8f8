import type { FleetView, InstanceView, RequestProgress, RequestView } from '../../../src/policy/types.ts';

/** A request on an instance: running and decoding unless told otherwise. */
export function prog(p: { inputTokens: number; predicted: number; generated: number; status?: string; prefillLeft?: number; id?: number }): RequestProgress {
  const left = p.prefillLeft ?? 0;
  return {
    id: p.id ?? 0, arrivalS: 0, inputTokens: p.inputTokens, predictedOutputTokens: p.predicted, model: 'm', tier: '', region: '', app: '',
    deadlineS: Infinity, status: p.status ?? 'running', generated: p.generated,
    kvTokens: p.generated > 0 ? p.inputTokens + p.generated - 1 : p.inputTokens - left,
    prefillTarget: p.inputTokens, prefilled: p.inputTokens - left,
  };
}

export function instance(id: number, reqs: RequestProgress[], o: Partial<InstanceView> = {}): InstanceView {
  const kvCapacityTokens = o.kvCapacityTokens ?? 10_000;
  const used = reqs.reduce((s, r) => s + r.kvTokens, 0);
  const running = reqs.filter((r) => r.status === 'running').length;
  return Object.freeze({
    id, pool: 'p', model: 'm', hardware: 'a6000', tp: 1, pp: 1, region: '', state: 'ready',
    numRunning: running, numWaiting: reqs.length - running, outstandingRequests: reqs.length,
    kvUsedFraction: used / kvCapacityTokens, outstandingTokens: 0, pendingTokens: 0, kvCapacityTokens,
    requests: () => reqs,
    ...o,
  }) as InstanceView;
}

export function fleetView(instances: InstanceView[], now = 0): FleetView {
  return Object.freeze({
    now,
    instances: Object.freeze(instances),
    routable: (m: string) => instances.filter((i) => i.model === m && i.state === 'ready'),
  });
}

export const newReq = (inputTokens: number, predictedOutputTokens: number, id = 1): RequestView => ({
  id, arrivalS: 0, inputTokens, predictedOutputTokens, model: 'm', tier: '', region: '', app: '', deadlineS: Infinity,
});
