import type { SimRequest } from '../../engine/request.ts';
import type { WaitingQueue } from './types.ts';

/** First come, first served: a ring-buffer deque (O(1) at both ends, no shifting of arrays). */
export function fcfs(): WaitingQueue {
  let buf: (SimRequest | undefined)[] = new Array(16);
  let head = 0;
  let size = 0;
  const grow = () => {
    const next: (SimRequest | undefined)[] = new Array(buf.length * 2);
    for (let i = 0; i < size; i++) next[i] = buf[(head + i) % buf.length];
    buf = next;
    head = 0;
  };
  return {
    get size() {
      return size;
    },
    push(r) {
      if (size === buf.length) grow();
      buf[(head + size) % buf.length] = r;
      size++;
    },
    pushFront(r) {
      if (size === buf.length) grow();
      head = (head - 1 + buf.length) % buf.length;
      buf[head] = r;
      size++;
    },
    peek() {
      return size === 0 ? undefined : buf[head];
    },
    shift() {
      if (size === 0) return undefined;
      const r = buf[head];
      buf[head] = undefined;
      head = (head + 1) % buf.length;
      size--;
      return r;
    },
    forEach(fn) {
      for (let i = 0; i < size; i++) fn(buf[(head + i) % buf.length]!);
    },
  };
}
