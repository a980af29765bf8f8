import cliProgress from 'cli-progress';
import { UserError } from '../util/errors.ts';

export function parseIntFlag(flag: string, v: string): number {
  if (!/^-?\d+$/.test(v.trim())) throw new UserError(`${flag}: expected an integer, got '${v}'`);
  return Number(v);
}

export function parseNumberFlag(flag: string, v: string, min = -Infinity): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < min) throw new UserError(`${flag}: expected a number${min > -Infinity ? ` ≥ ${min}` : ''}, got '${v}'`);
  return n;
}

/** A progress line on stderr when it is a terminal (never in pipes or CI logs). */
export function progressReporter(quiet: boolean): { update: (simTimeS: number, arrived: number) => void; stop: () => void } {
  if (quiet || !process.stderr.isTTY) return { update: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    { format: 'simulating | {arrived} requests | simulated {simTime} | {duration_formatted}', stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(1, 0, { arrived: 0, simTime: '0 s' });
  return {
    update: (t, n) => bar.update(0, { arrived: n.toLocaleString('en-US'), simTime: formatDuration(t) }),
    stop: () => bar.stop(),
  };
}

export function formatDuration(s: number): string {
  if (s < 120) return `${s.toFixed(0)} s`;
  if (s < 7200) return `${(s / 60).toFixed(1)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
