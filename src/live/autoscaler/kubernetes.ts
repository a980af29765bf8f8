import { AppsV1Api, CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, type V1LabelSelector, type V1Pod } from '@kubernetes/client-node';
import type { Actuator, GatewayHandle, ScaledPool } from './types.ts';

export interface KubeActuatorOptions {
  namespace: string;
  /** Deployment name per pool name. */
  deployments: Record<string, string>;
  /** Port the Deployment's pods serve the OpenAI API on (vLLM's default 8000). */
  port?: number;
  /** Seconds a pod leaving the Deployment may finish its in-flight requests through the gateway (default: the gateway's drainTimeoutS). */
  drainTimeoutS?: number;
  /** Default: KUBECONFIG / ~/.kube/config / in-cluster, as kubectl finds it. */
  kubeConfig?: KubeConfig;
}

/**
 * Scales Deployments through their `scale` subresource (apps/v1): read `GET …/deployments/{name}/scale`,
 * write `PATCH …/deployments/{name}/scale` with a JSON merge patch `{"spec":{"replicas":N}}`. Readiness comes
 * from the Deployment's `status.readyReplicas`: replicas asked for but not ready count as provisioning.
 *
 * Each pod is one gateway backend, as llm-d and AIBrix route per pod: every tick lists the pods the Deployment's
 * selector matches (`GET /api/v1/namespaces/{ns}/pods?labelSelector=…`), adds those that are Ready and not being
 * deleted as `http://{podIP}:{port}`, and drains backends whose pod left (deleted by a scale-in, failed, or no
 * longer Ready). Without this a scale-out would never reach the gateway's ready count and the scaler would keep
 * asking for more pods.
 */
export function kubeActuator(gw: GatewayHandle, opts: KubeActuatorOptions): Actuator {
  const kc = opts.kubeConfig ?? loadDefault();
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const port = opts.port ?? 8000;
  const notReady = new Map<string, number>();
  /** Backends this actuator added, by URL, per pool name. */
  const podBackends = new Map<string, Map<string, number>>();
  const deployment = (pool: ScaledPool) => {
    const d = Object.hasOwn(opts.deployments, pool.name) ? opts.deployments[pool.name] : undefined;
    if (!d) throw new Error(`no deployment configured for pool ${pool.name}`);
    return d;
  };
  const scaleTo = async (pool: ScaledPool, delta: number) => {
    const name = deployment(pool);
    const cur = await apps.readNamespacedDeploymentScale({ name, namespace: opts.namespace });
    const from = cur.spec?.replicas ?? 0;
    const to = Math.max(0, from + delta);
    await apps.patchNamespacedDeploymentScale({ name, namespace: opts.namespace, body: { spec: { replicas: to } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    return `${opts.namespace}/${name}: replicas ${from} → ${to}`;
  };
  /** Makes the pool's gateway backends the Deployment's serving pods; returns a note when something changed. */
  const syncPods = async (pool: ScaledPool, selector: V1LabelSelector | undefined): Promise<string | undefined> => {
    const name = deployment(pool);
    const labelSelector = selectorString(selector);
    if (labelSelector === '') return `${opts.namespace}/${name}: no pod selector, pods not discovered`;
    const pods = await core.listNamespacedPod({ namespace: opts.namespace, labelSelector });
    const serving = new Set(pods.items.filter(isServing).map((p) => podUrl(p.status!.podIP!, port)));
    let mine = podBackends.get(pool.name);
    if (!mine) podBackends.set(pool.name, (mine = new Map()));
    const added: string[] = [];
    const gone: string[] = [];
    for (const [url, id] of mine) {
      if (serving.has(url)) continue;
      mine.delete(url);
      gone.push(url);
      void gw.drainBackend(id, opts.drainTimeoutS);
    }
    const known = new Set(gw.fleet.instances.filter((b) => !b.removed).map((b) => b.url));
    for (const url of serving) {
      if (known.has(url)) continue; // already a backend (listed in the config, or added earlier)
      mine.set(url, gw.addBackend(pool.model, url).id);
      added.push(url);
    }
    if (added.length === 0 && gone.length === 0) return undefined;
    return `${opts.namespace}/${name} pods:${added.map((u) => ` +${u}`).join('')}${gone.map((u) => ` −${u}`).join('')}`;
  };
  return {
    kind: 'kubernetes',
    pending: (pool) => notReady.get(pool.name) ?? 0,
    async refresh(pools) {
      const notes: string[] = [];
      for (const p of pools) {
        const d = await apps.readNamespacedDeployment({ name: deployment(p), namespace: opts.namespace });
        notReady.set(p.name, Math.max(0, (d.spec?.replicas ?? 0) - (d.status?.readyReplicas ?? 0)));
        const note = await syncPods(p, d.spec?.selector);
        if (note !== undefined) notes.push(note);
      }
      if (notes.length > 0) {
        await gw.probe(); // new pods serve from their first health check, not a tick later
        return notes.join('; ');
      }
    },
    add: (pool, count) => scaleTo(pool, count),
    remove: (pool, count) => scaleTo(pool, -count),
    close: async () => {},
  };
}

/** A pod that takes requests: Running, Ready, with an IP, and not being deleted. */
function isServing(p: V1Pod): boolean {
  return (
    p.metadata?.deletionTimestamp == null &&
    p.status?.phase === 'Running' &&
    typeof p.status.podIP === 'string' &&
    p.status.podIP !== '' &&
    (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

function podUrl(ip: string, port: number): string {
  return ip.includes(':') ? `http://[${ip}]:${port}` : `http://${ip}:${port}`;
}

/** A label selector as the API's `labelSelector` query string (`k=v,k in (a,b),!k`). */
function selectorString(s: V1LabelSelector | undefined): string {
  const parts = Object.entries(s?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of s?.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

function loadDefault(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}
