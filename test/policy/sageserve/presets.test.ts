import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicyOptions } from '../../../src/policy/options.ts';
import { sageserveRouterOptions } from '../../../src/policy/routing/sageserve.ts';
import { sageserveScalingOptions } from '../../../src/policy/sageserve/options.ts';
import { ConfigError } from '../../../src/util/errors.ts';

const scaling = (o: unknown) => parsePolicyOptions(sageserveScalingOptions, o, ['scaling', 'options']);
const routing = (o: unknown) => parsePolicyOptions(sageserveRouterOptions, o, ['routing', 'options']);

test("the paper's values are the defaults; preset: code gives the released code's where they differ", () => {
  const paper = scaling({});
  assert.deepEqual([paper.scaleUpAbove, paper.scaleDownBelow, paper.peakWindowMin], [0.7, 0.3, [1, 60]]);
  const code = scaling({ preset: 'code' });
  assert.deepEqual([code.scaleUpAbove, code.scaleDownBelow, code.peakWindowMin], [0.5, 0.25, [20, 60]]);
  assert.equal(code.cooldownS, paper.cooldownS, 'values the code shares stay');
  assert.deepEqual([paper.ltuEmergencyAbove, code.ltuEmergencyAbove], [null, 0.9], "LT-U's emergency scale-out is the code's only");
  const r = routing({ preset: 'code' });
  assert.deepEqual([r.niwRelease, r.reroute, r.niwReleaseTo, r.niwQueues], ['code', false, 'signalling', 'model-region']);
  assert.deepEqual([routing({}).niwRelease, routing({}).reroute, routing({}).niwReleaseTo, routing({}).niwQueues], ['paper', true, 'signalling', 'model']);
});

test('keys set explicitly win over the preset, and an unknown preset is named as the bad field', () => {
  assert.equal(scaling({ preset: 'code', scaleUpAbove: 0.8 }).scaleUpAbove, 0.8);
  assert.equal(routing({ preset: 'code', reroute: true }).reroute, true);
  assert.throws(() => scaling({ preset: 'artifact' }), (e: unknown) => e instanceof ConfigError && /scaling\.options\.preset/.test(e.message));
  assert.equal(routing({}).niwQueues, 'model');
  assert.throws(() => routing({ niwQueues: 'region' }), (e: unknown) => e instanceof ConfigError && /routing\.options\.niwQueues/.test(e.message));
});
