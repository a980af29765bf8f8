/**
 * The Prometheus text exposition format, both ways: a small histogram/counter/gauge writer for the emulator
 * (which must use vLLM's metric names and labels, so prom-client's per-process registry is not a fit), and a
 * parser the gateway uses on scraped `/metrics` bodies.
 */

export class TextHistogram {
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {
    this.counts = new Float64Array(buckets.length);
  }

  observe(v: number): void {
    this.sum += v;
    this.count++;
    const b = this.buckets;
    for (let i = 0; i < b.length; i++) if (v <= b[i]!) this.counts[i]!++;
  }

  render(labels: string): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    const sep = labels ? ',' : '';
    this.buckets.forEach((le, i) => lines.push(`${this.name}_bucket{${labels}${sep}le="${le}"} ${this.counts[i]}`));
    lines.push(`${this.name}_bucket{${labels}${sep}le="+Inf"} ${this.count}`);
    lines.push(`${this.name}_sum{${labels}} ${this.sum}`);
    lines.push(`${this.name}_count{${labels}} ${this.count}`);
    return lines.join('\n');
  }
}

export function renderScalar(name: string, type: 'gauge' | 'counter', help: string, labels: string, value: number): string {
  return `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name}{${labels}} ${value}`;
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses exposition text into samples; comment and malformed lines are skipped (a scrape must not throw). */
export function parsePromText(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    if (m[2]) for (const l of m[2].matchAll(LABEL)) labels[l[1]!] = l[2]!;
    const value = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]);
    if (Number.isNaN(value) && m[3] !== 'NaN') continue;
    out.push({ name: m[1]!, labels, value });
  }
  return out;
}

/** Sum of all samples of a metric (over label sets), or undefined when the metric is absent. */
export function sumOf(samples: readonly Sample[], name: string): number | undefined {
  let s: number | undefined;
  for (const x of samples) if (x.name === name) s = (s ?? 0) + x.value;
  return s;
}
