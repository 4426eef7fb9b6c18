/**
 * A small event emitter with the calling convention of `events-ex`, which the seed's executor extends:
 * each listener is called with `this` bound to one event object per emit, `{target, type, result,
 * stopped, resolved}`; a listener answers by setting `this.result` and stops the remaining listeners
 * with `this.stopped = true`; `emit()` returns `this.result`. A listener that throws does not stop the
 * others: its error is emitted as `'error'` (`err, 'notify', type, listener, args`) when something
 * listens to `'error'`, and otherwise dropped, as `events-ex` does.
 */

export type Listener = (this: EventObject, ...args: any[]) => unknown;

/** What `this` is inside a listener. */
export class EventObject {
  /** The emitter (the executor). */
  target: unknown;
  type: string;
  /** Set this to stop the listeners after this one. */
  stopped = false;
  resolved = false;
  /** The event's answer (`beforeSync`: `{ state: SyncStates.SKIP | SyncStates.ABORT, reason? }`). */
  result: any = undefined;

  constructor(target: unknown, type: string) {
    this.target = target;
    this.type = type;
  }

  end(): unknown {
    return this.result;
  }
}

interface Entry {
  listener: Listener;
  /** The caller's function, for `off()` of a `once()` listener. */
  original: Listener;
}

export class SeedEventEmitter {
  readonly #events = new Map<string, Entry[]>();

  /** Adds a listener (at `index` when given, else last). */
  on(type: string, listener: Listener, index?: number): this {
    if (typeof listener !== 'function') throw new TypeError(`${String(listener)} is not a function`);
    const list = this.#events.get(type) ?? [];
    const entry = { listener, original: listener };
    if (typeof index === 'number') list.splice(index, 0, entry);
    else list.push(entry);
    this.#events.set(type, list);
    return this;
  }

  addListener(type: string, listener: Listener, index?: number): this {
    return this.on(type, listener, index);
  }

  /** Adds a listener that is removed before its first call. */
  once(type: string, listener: Listener, index?: number): this {
    if (typeof listener !== 'function') throw new TypeError(`${String(listener)} is not a function`);
    const self = this;
    let fired = false;
    const wrapper: Listener = function (this: EventObject, ...args: unknown[]) {
      self.off(type, wrapper);
      if (fired) return undefined;
      fired = true;
      return listener.apply(this, args);
    };
    const list = this.#events.get(type) ?? [];
    const entry = { listener: wrapper, original: listener };
    if (typeof index === 'number') list.splice(index, 0, entry);
    else list.push(entry);
    this.#events.set(type, list);
    return this;
  }

  /** Removes a listener (the last one registered as it, whether by `on` or `once`). */
  off(type: string, listener: Listener): this {
    const list = this.#events.get(type);
    if (!list) return this;
    for (let i = list.length - 1; i >= 0; i--) {
      if (list[i]!.listener === listener || list[i]!.original === listener) {
        list.splice(i, 1);
        break;
      }
    }
    if (list.length === 0) this.#events.delete(type);
    return this;
  }

  removeListener(type: string, listener: Listener): this {
    return this.off(type, listener);
  }

  removeAllListeners(type?: string): this {
    if (type === undefined) this.#events.clear();
    else this.#events.delete(type);
    return this;
  }

  /** Accepted for compatibility; there is no listener limit. */
  setMaxListeners(_n: number): this {
    return this;
  }

  listeners(type: string): Listener[] {
    return (this.#events.get(type) ?? []).map((e) => e.original);
  }

  listenerCount(type: string): number {
    return this.#events.get(type)?.length ?? 0;
  }

  /** Calls the listeners in order with `this` = a new event object; returns its `result`. */
  emit(type: string, ...args: unknown[]): unknown {
    const list = this.#events.get(type);
    if (!list || list.length === 0) return undefined;
    const evt = new EventObject(this, type);
    const errors: Array<{ err: unknown; listener: Listener }> = [];
    for (const { listener } of list.slice()) {
      try {
        listener.apply(evt, args);
      } catch (err) {
        errors.push({ err, listener });
      }
      if (evt.stopped) break;
    }
    this.#reportErrors(type, errors, args);
    return evt.end();
  }

  /** As `emit`, awaiting each listener that returns a promise before the next is called. */
  async emitAsync(type: string, ...args: unknown[]): Promise<unknown> {
    const list = this.#events.get(type);
    if (!list || list.length === 0) return undefined;
    const evt = new EventObject(this, type);
    const errors: Array<{ err: unknown; listener: Listener }> = [];
    for (const { listener } of list.slice()) {
      try {
        await listener.apply(evt, args);
      } catch (err) {
        errors.push({ err, listener });
      }
      if (evt.stopped) break;
    }
    this.#reportErrors(type, errors, args);
    return evt.end();
  }

  #reportErrors(type: string, errors: Array<{ err: unknown; listener: Listener }>, args: unknown[]): void {
    if (errors.length === 0 || type === 'error' || this.listenerCount('error') === 0) return;
    for (const { err, listener } of errors) this.emit('error', err, 'notify', type, listener, args);
  }
}
