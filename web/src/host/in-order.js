// @ts-check
// Numbered items that may arrive out of order (each module thread's worker has its own
// line to the page), handed on in number order: an item waits for every one before it.

/** @template T */
export class InOrder {
  /** @param {(item: T) => void} deliver */
  constructor(deliver) {
    this.deliver = deliver;
    this.next = 0;
    /** @type {Map<number, T>} */
    this.waiting = new Map();
  }

  /** Item number `seq` has arrived: delivers it and any that waited for it. */
  arrive(seq, /** @type {T} */ item) {
    this.waiting.set(seq, item);
    while (this.waiting.has(this.next)) {
      const ready = /** @type {T} */ (this.waiting.get(this.next));
      this.waiting.delete(this.next++);
      this.deliver(ready);
    }
  }
}
