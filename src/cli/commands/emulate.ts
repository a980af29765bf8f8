import { resolve } from 'node:path';
import type { Command } from 'commander';
import { startEmulator } from '../../live/emulator/server.ts';
import { loadCatalogFile } from '../../model/catalog.ts';
import { UserError } from '../../util/errors.ts';
import { MAX_TIME_SCALE, MIN_TIME_SCALE, nonEmptyFlag, parseIntFlag, parseTimeScaleFlag } from '../util.ts';
import { parseTimerSecondsFlag } from '../../live/timers.ts';
import { parseDecimal } from '../../util/decimal.ts';

interface EmulateFlags {
  model: string;
  hardware: string;
  tp: string;
  host: string;
  port: string;
  timeScale: string;
  startupDelay: string;
  errorRate: string;
  stallAfterTokens?: string;
  crashAfter?: string;
  seed: string;
  servedName: string[];
  chatOutputTokens: string;
  kvBlocks?: string;
  maxNumSeqs?: string;
  enablePrefixCaching?: boolean;
  catalog?: string;
}

export function registerEmulate(program: Command): void {
  program
    .command('emulate')
    .description('Run a vLLM-compatible OpenAI server whose timing comes from the simulator engine and perf model (no GPU)')
    .requiredOption('--model <name>', 'catalog model, e.g. llama3.1-8b (required)')
    .requiredOption('--hardware <name>', 'catalog hardware, e.g. h100-80gb (required)')
    .option('--catalog <file>', "catalog YAML adding or overriding devices and models (format: src/model/README.md), as a scenario's catalog: does")
    .option('--tp <n>', 'tensor-parallel degree', '1')
    .option('--host <addr>', 'listen address', '127.0.0.1')
    .option('--port <n>', 'listen port (0 = any free port)', '8000')
    .option('--time-scale <x>', `run x× faster than the modelled GPU (${MIN_TIME_SCALE} to ${MAX_TIME_SCALE})`, '1')
    .option('--startup-delay <s>', 'wall seconds before /health is 200 (model load)', '0')
    .option('--error-rate <f>', 'fraction of requests answered with HTTP 500', '0')
    .option('--stall-after-tokens <n>', 'stop sending a response after n tokens (connection stays open)')
    .option('--crash-after <s>', 'drop all connections and exit after s wall seconds')
    .option('--seed <n>', 'seed of the failure injection', '1')
    .option('--served-name <name>', 'a model name clients use (repeatable, as vLLM\'s --served-model-name a b; default: --model)', (v: string, prev: string[]) => [...prev, v], [])
    .option('--chat-output-tokens <n>', 'output tokens of a chat without max_tokens (its emulated EOS; at most the context left)', '256')
    .option('--kv-blocks <n>', 'override the KV capacity in 16-token blocks (default: from the memory plan)')
    .option('--max-num-seqs <n>', 'override the batch size limit (default 256)')
    .option('--enable-prefix-caching', "model vLLM's automatic prefix caching: a prompt whose leading text (or token ids) another request sent skips that part of its prefill (engine.prefixCache; off by default here)")
    .action(async (o: EmulateFlags) => {
      // An empty --host would listen on every interface, an empty --served-name serve a model with id ''.
      const host = nonEmptyFlag('--host', o.host, 'listen address');
      const servedNames = o.servedName.length === 0 ? undefined : o.servedName.map((n) => nonEmptyFlag('--served-name', n, 'model name'));
      const twice = servedNames?.find((n, i) => servedNames.indexOf(n) !== i);
      if (twice !== undefined) throw new UserError(`--served-name: '${twice}' given twice; expected distinct model names (as the gateway's pools[].aliases)`);
      const port = parseIntFlag('--port', o.port, 0, 65535);
      if (port < 0 || port > 65535) throw new UserError(`--port: expected 0..65535, got ${port}`);
      const tp = parseIntFlag('--tp', o.tp, 1);
      if (tp < 1) throw new UserError(`--tp: expected an integer ≥ 1, got ${tp}`);
      const timeScale = parseTimeScaleFlag('--time-scale', o.timeScale);
      const errorRate = parseDecimal(o.errorRate);
      if (!(errorRate >= 0 && errorRate <= 1)) throw new UserError(`--error-rate: expected a fraction in [0, 1], got '${o.errorRate}'`);
      const intAtLeast = (min: number, flag: string, v: string | undefined) => {
        if (v === undefined) return undefined;
        const n = parseIntFlag(flag, v, min);
        if (n < min) throw new UserError(`${flag}: expected an integer ≥ ${min}, got ${n}`);
        return n;
      };
      const engine: Record<string, number | boolean> = {};
      const kvBlocks = intAtLeast(1, '--kv-blocks', o.kvBlocks);
      const maxNumSeqs = intAtLeast(1, '--max-num-seqs', o.maxNumSeqs);
      if (kvBlocks !== undefined) engine.kvBlocks = kvBlocks;
      if (maxNumSeqs !== undefined) engine.maxNumSeqs = maxNumSeqs;
      if (o.enablePrefixCaching) engine.prefixCache = true;
      // A bad file is a ConfigError naming it (and the line and field of a bad entry): exit 2, one line.
      const catalog = o.catalog === undefined ? undefined : loadCatalogFile(resolve(nonEmptyFlag('--catalog', o.catalog, 'catalog file')));
      const emu = await startEmulator({
        model: o.model,
        hardware: o.hardware,
        ...(catalog ? { catalog } : {}),
        tp,
        host,
        port,
        timeScale,
        startupDelayS: parseTimerSecondsFlag('--startup-delay', o.startupDelay, 0),
        errorRate,
        stallAfterTokens: intAtLeast(0, '--stall-after-tokens', o.stallAfterTokens),
        crashAfterS: o.crashAfter === undefined ? undefined : parseTimerSecondsFlag('--crash-after', o.crashAfter, 0),
        seed: parseIntFlag('--seed', o.seed),
        servedNames,
        chatOutputTokens: intAtLeast(1, '--chat-output-tokens', o.chatOutputTokens),
        engine,
        onCrash: () => {
          process.stderr.write('emulate: crash injected, exiting\n');
          process.exit(1);
        },
      });
      const e = emu.backend.pool.engine;
      process.stderr.write(`emulate: ${emu.servedName} on ${o.hardware} ×${tp} at ${emu.url} (KV ${e.kvBlocks} blocks × ${e.blockTokens} tokens, time scale ${timeScale}×)\n`);
      const stop = () => {
        void emu.close().then(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
