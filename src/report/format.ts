/** A latency in seconds as people read it: "12.3 ms" below one second, "7481.04 s" from there (never "7481043 ms"). */
export const formatLatency = (s: number): string => (s < 1 ? `${(s * 1000).toFixed(1)} ms` : `${s.toFixed(2)} s`);
