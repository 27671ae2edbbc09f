/**
 * Watches `object[method]`, an async method that still runs for real: counts its calls, and can hold
 * the next answer to arrive (the work is done; only its result waits) until released.
 */
export function watchCalls<T extends object>(object: T, method: keyof T & string) {
  const original = (object[method] as (...args: unknown[]) => Promise<unknown>).bind(object);
  let calls = 0;
  let hold: { answered: () => void; gate: Promise<void> } | null = null;
  const spy = jest.spyOn(object, method as never).mockImplementation((async (...args: unknown[]) => {
    calls++;
    const result = await original(...args);
    const held = hold;
    hold = null;
    if (held) {
      held.answered();
      await held.gate;
    }
    return result;
  }) as never);
  return {
    calls: () => calls,
    /** Holds the next answer to arrive: `read` resolves once that call has its result, `release` lets it through. */
    holdNext() {
      let release!: () => void;
      let answered!: () => void;
      const gate = new Promise<void>((done) => (release = done));
      const read = new Promise<void>((done) => (answered = done));
      hold = { answered, gate };
      return { read, release };
    },
    restore: () => spy.mockRestore(),
  };
}
