import { createScaler } from '../../policy/scaling/registry.ts';
import { ConfigError } from '../../util/errors.ts';
import { Rng } from '../../util/rng.ts';
import type { GatewayConfig } from '../gateway/config.ts';
import { advisoryActuator } from './advisory.ts';
import { LiveAutoscaler } from './controller.ts';
import { kubeActuator } from './kubernetes.ts';
import { processActuator } from './process.ts';
import type { Actuator, GatewayHandle, ScaledPool } from './types.ts';

/** Builds the scaling loop a gateway config's `autoscaler:` section describes (undefined when absent). */
export function autoscalerFromConfig(cfg: GatewayConfig, gateway: GatewayHandle, now: () => number): LiveAutoscaler | undefined {
  const a = cfg.autoscaler;
  if (!a) return undefined;
  const served = new Set(cfg.pools.map((p) => p.model));
  const pools: ScaledPool[] = a.pools.map((p, i) => {
    if (!served.has(p.model)) throw new ConfigError({ path: `autoscaler.pools[${i}].model`, expected: `a model of pools[] (${[...served].join(', ')})`, got: p.model });
    return { name: p.name ?? p.model, model: p.model, hardware: p.hardware, tp: p.tp, minCount: p.minCount, maxCount: p.maxCount };
  });
  let actuator: Actuator;
  switch (a.actuator.kind) {
    case 'advisory':
      actuator = advisoryActuator();
      break;
    case 'process':
      actuator = processActuator(gateway, { command: a.actuator.command, host: cfg.host, healthTimeoutS: a.actuator.healthTimeoutS, drainTimeoutS: cfg.drainTimeoutS });
      break;
    case 'kubernetes':
      for (const [i, p] of pools.entries()) {
        if (!Object.hasOwn(a.actuator.deployments, p.name)) throw new ConfigError({ path: `autoscaler.actuator.deployments`, expected: `a Deployment for autoscaler.pools[${i}] (key '${p.name}', its name or model)`, got: a.actuator.deployments });
      }
      actuator = kubeActuator(gateway, { namespace: a.actuator.namespace, deployments: a.actuator.deployments, port: a.actuator.port });
      break;
    default: {
      const never: never = a.actuator;
      throw new Error(`unknown actuator ${JSON.stringify(never)}`);
    }
  }
  return new LiveAutoscaler({
    scaler: createScaler(a.policy, a.options, { rng: new Rng(cfg.seed).fork('scaler') }),
    limits: a.limits,
    pools,
    actuator,
    gateway,
    intervalS: a.intervalS,
    decisionLog: a.decisionLog,
    stateFile: a.stateFile,
    now,
  });
}
