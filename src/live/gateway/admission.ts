/**
 * The gateway's bounded waiting room: requests no backend can take now wait here, served by priority
 * (lower number first, from the tier) and in arrival order within a priority. Bounded: when `capacity`
 * requests wait, the next one is refused (the gateway answers 429 with Retry-After).
 */
export class AdmissionQueue<T> {
  private readonly levels = new Map<number, T[]>();
  private order: number[] = [];
  private n = 0;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.n;
  }

  get full(): boolean {
    return this.n >= this.capacity;
  }

  /** Adds at the back of its priority (or the front, for a retried request that was already admitted). */
  push(item: T, priority: number, front = false): void {
    let l = this.levels.get(priority);
    if (!l) {
      this.levels.set(priority, (l = []));
      this.order = [...this.levels.keys()].sort((a, b) => a - b);
    }
    if (front) l.unshift(item);
    else l.push(item);
    this.n++;
  }

  remove(item: T, priority: number): boolean {
    const l = this.levels.get(priority);
    const i = l ? l.indexOf(item) : -1;
    if (i < 0) return false;
    l!.splice(i, 1);
    this.n--;
    return true;
  }

  /**
   * Offers each waiting item, best first, to `take`; items it accepts (returns true) leave the queue.
   * `take` may return 'stop' to end the pass.
   */
  drain(take: (item: T) => boolean | 'stop'): void {
    for (const p of this.order) {
      const l = this.levels.get(p)!;
      let w = 0;
      let stop = false;
      for (let i = 0; i < l.length; i++) {
        const it = l[i]!;
        if (stop) {
          l[w++] = it;
          continue;
        }
        const r = take(it);
        if (r === true) this.n--;
        else {
          l[w++] = it;
          if (r === 'stop') stop = true;
        }
      }
      l.length = w;
      if (stop) return;
    }
  }
}
