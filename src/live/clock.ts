/**
 * The live plane's time: seconds on the modelled timeline, which runs `scale`× faster than the wall clock
 * (scale 20 ⇒ one wall second is 20 modelled seconds). Engines, routers and fleet views get time only through a
 * `LiveClock`; other wall-clock reads in src/live are for latency metrics, timeouts and OpenAI's `created` field.
 */
export interface LiveClock {
  /** Modelled seconds since the clock started. */
  nowS(): number;
  /** Wall milliseconds until modelled time `atS` (0 if already past). */
  delayMs(atS: number): number;
  readonly scale: number;
}

export function scaledClock(scale = 1): LiveClock {
  const t0 = performance.now();
  return {
    scale,
    nowS: () => ((performance.now() - t0) / 1000) * scale,
    delayMs(atS) {
      const d = (atS * 1000) / scale - (performance.now() - t0);
      return d > 0 ? d : 0;
    },
  };
}
