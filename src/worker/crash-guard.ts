/**
 * Attributes exceptions that escape a handler's own callbacks (a throwing timer, an event
 * listener, a promise nobody awaits) to the job whose handler started them, so they fail that
 * one job instead of killing the process and every other job on it.
 *
 * Each handler runs inside an AsyncLocalStorage scope; Node keeps that scope across timers,
 * I/O callbacks and promises, and it is still current when 'uncaughtException' and
 * 'unhandledRejection' are emitted for them. While at least one worker runs, one pair of
 * process listeners is installed (reference counted). An exception that carries no worker
 * scope is not ours: if no other listener handles it, the process dies as Node would have
 * (stack on stderr, exit code 1).
 *
 * What it cannot catch: a synchronous infinite loop (nothing runs until it ends; only the
 * lease expiry and another worker's takeover help), process.exit() or abort() called by a
 * handler, native crashes, out-of-memory, and callbacks registered from outside the handler's
 * async context (a connection pool created before the handler ran) whose errors carry that
 * outer context instead.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The job a piece of handler code belongs to. */
export interface CrashScope {
  /** Called with whatever escaped; the job is failed (or the crash logged if it already settled). */
  crashed(error: unknown): void;
}

const storage = new AsyncLocalStorage<CrashScope>();
let installed = 0;

/** Runs `fn` (a handler) inside `scope`: everything it schedules carries the scope. */
export function runInScope<T>(scope: CrashScope, fn: () => T): T {
  return storage.run(scope, fn);
}

function onUncaught(error: unknown): void {
  const scope = storage.getStore();
  if (scope) {
    scope.crashed(error);
    return;
  }
  if (process.listenerCount('uncaughtException') > 1) return; // another listener owns it
  dieLikeNode(error);
}

function onUnhandled(reason: unknown): void {
  const scope = storage.getStore();
  if (scope) {
    scope.crashed(reason);
    return;
  }
  if (process.listenerCount('unhandledRejection') > 1) return;
  dieLikeNode(reason);
}

function dieLikeNode(error: unknown): never {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? String(error)) : `Uncaught ${String(error)}`}\n`);
  process.exit(1);
}

/** Installs the process listeners (once, however many workers run); returns the matching uninstall. */
export function installCrashGuard(): () => void {
  if (installed++ === 0) {
    process.on('uncaughtException', onUncaught);
    process.on('unhandledRejection', onUnhandled);
  }
  let done = false;
  return () => {
    if (done) return;
    done = true;
    if (--installed === 0) {
      process.off('uncaughtException', onUncaught);
      process.off('unhandledRejection', onUnhandled);
    }
  };
}
