import OpenAI from 'openai';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/live/emulator/server.ts';
import { gatewayConfigSchema, type GatewayConfigInput } from '../../src/live/gateway/config.ts';
import { startGateway, type Gateway } from '../../src/live/gateway/gateway.ts';

export const MODEL = 'llama3.1-8b';

export interface TestFleet {
  emus: Emulator[];
  gw: Gateway;
  client: OpenAI;
  close(): Promise<void>;
}

/** n emulators and a gateway over them on loopback (ephemeral ports); `close` always tears all down. */
export async function startFleet(n: number, emu: Partial<EmulatorOptions> = {}, gw: Partial<GatewayConfigInput> = {}, perEmu?: (i: number) => Partial<EmulatorOptions>): Promise<TestFleet> {
  const emus: Emulator[] = [];
  try {
    for (let i = 0; i < n; i++) emus.push(await startEmulator({ model: MODEL, hardware: 'h100-80gb', timeScale: 20, seed: i + 1, ...emu, ...(perEmu?.(i) ?? {}) }));
    const cfg = gatewayConfigSchema.parse({
      port: 0,
      pools: [{ model: MODEL, backends: emus.map((e) => e.url) }],
      health: { intervalS: 0.2, timeoutS: 0.5, unhealthyAfter: 1, healthyAfter: 1 },
      scrapeIntervalS: 0.2,
      ...gw,
    });
    const g = await startGateway(cfg);
    const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'test', maxRetries: 0, timeout: 20_000 });
    return {
      emus,
      gw: g,
      client,
      async close() {
        await g.close();
        await Promise.all(emus.map((e) => e.close()));
      },
    };
  } catch (e) {
    await Promise.all(emus.map((x) => x.close()));
    throw e;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
