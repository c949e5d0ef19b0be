/**
 * The events of the job service, structurally VS Code's (`Disposable`, `Event`, `EventEmitter`), so that the extension
 * injects its own emitters and the core runs in plain Node with {@link ListenerSet}.
 */

/** Something to stop listening with (structurally a `vscode.Disposable`). */
export interface Subscription {
  dispose(): void;
}

/** Subscribes a listener (structurally a `vscode.Event`). */
export type EventHook<T> = (listener: (value: T) => void) => Subscription;

/** What the service fires its events through (structurally a `vscode.EventEmitter`, which the extension injects). */
export interface Emitter<T> {
  readonly event: EventHook<T>;
  fire(value: T): void;
  dispose(): void;
}

/**
 * The plain emitter used without an injected one: listeners in subscription order; a listener that throws does not
 * stop the others (its error goes to `onError`); after `dispose` nothing fires and subscribing is a no-op.
 */
export class ListenerSet<T> implements Emitter<T> {
  private listeners: ((value: T) => void)[] = [];
  private disposed = false;

  constructor(private readonly onError: (err: unknown) => void = () => undefined) {}

  readonly event: EventHook<T> = (listener) => {
    if (this.disposed) return { dispose: () => undefined };
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  };

  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch (err) {
        this.onError(err);
      }
    }
  }

  dispose(): void {
    this.disposed = true;
    this.listeners = [];
  }
}
