/**
 * Reads under way, by key, shared by whoever asks for the same key meanwhile: when a cached entry that
 * many requests use expires, they wait for one read instead of each making its own (a loaded server
 * would otherwise send one identical query per request until the first answer arrives). A key that is
 * forgotten is read afresh by the next caller, so a change announced while a read was under way is
 * never answered from that older read.
 */
export class SharedReads<V> {
  private readonly pending = new Map<string, Promise<V>>();

  /** The read of `key` under way, or `read()` started as it. */
  get(key: string, read: () => Promise<V>): Promise<V> {
    let shared = this.pending.get(key);
    if (!shared) {
      shared = read().finally(() => {
        if (this.pending.get(key) === shared) this.pending.delete(key);
      });
      this.pending.set(key, shared);
    }
    return shared;
  }

  /** Later callers read `key` (or, without one, every key) afresh; reads under way still answer their own callers. */
  forget(key?: string): void {
    if (key === undefined) this.pending.clear();
    else this.pending.delete(key);
  }
}
