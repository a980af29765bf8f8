import { AppsV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Actuator, ScaledPool } from './types.ts';

export interface KubeActuatorOptions {
  namespace: string;
  /** Deployment name per pool name. */
  deployments: Record<string, string>;
  /** Default: KUBECONFIG / ~/.kube/config / in-cluster, as kubectl finds it. */
  kubeConfig?: KubeConfig;
}

/**
 * Scales Deployments through their `scale` subresource (apps/v1): read `GET …/deployments/{name}/scale`,
 * write `PATCH …/deployments/{name}/scale` with a JSON merge patch `{"spec":{"replicas":N}}`. Readiness comes
 * from the Deployment's `status.readyReplicas`: replicas asked for but not ready count as provisioning.
 */
export function kubeActuator(opts: KubeActuatorOptions): Actuator {
  const kc = opts.kubeConfig ?? loadDefault();
  const api = kc.makeApiClient(AppsV1Api);
  const notReady = new Map<string, number>();
  const deployment = (pool: ScaledPool) => {
    const d = Object.hasOwn(opts.deployments, pool.name) ? opts.deployments[pool.name] : undefined;
    if (!d) throw new Error(`no deployment configured for pool ${pool.name}`);
    return d;
  };
  const scaleTo = async (pool: ScaledPool, delta: number) => {
    const name = deployment(pool);
    const cur = await api.readNamespacedDeploymentScale({ name, namespace: opts.namespace });
    const from = cur.spec?.replicas ?? 0;
    const to = Math.max(0, from + delta);
    await api.patchNamespacedDeploymentScale({ name, namespace: opts.namespace, body: { spec: { replicas: to } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    return `${opts.namespace}/${name}: replicas ${from} → ${to}`;
  };
  return {
    kind: 'kubernetes',
    pending: (pool) => notReady.get(pool.name) ?? 0,
    async refresh(pools) {
      for (const p of pools) {
        const d = await api.readNamespacedDeployment({ name: deployment(p), namespace: opts.namespace });
        notReady.set(p.name, Math.max(0, (d.spec?.replicas ?? 0) - (d.status?.readyReplicas ?? 0)));
      }
    },
    add: (pool, count) => scaleTo(pool, count),
    remove: (pool, count) => scaleTo(pool, -count),
    close: async () => {},
  };
}

function loadDefault(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}
