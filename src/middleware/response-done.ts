import type { ServerResponse } from 'node:http';

const HOOKS = Symbol('thv.responseDoneHooks');
/** A hook gets `performance.now()` at the end of the response, read once for all of them. */
export type DoneHook = (endedAt: number) => void;
type WithHooks = ServerResponse & { [HOOKS]?: DoneHook[] };

/**
 * Runs `fn` once the response is over. 'close' follows 'finish' on every response and also ends one
 * whose client went away. The stages that watch for it share one listener per response (a listener
 * per stage was a measurable part of the per-request cost); hooks run in the order they were added.
 */
export function onResponseDone(res: ServerResponse, fn: DoneHook): void {
  const r = res as WithHooks;
  const hooks = r[HOOKS];
  if (hooks !== undefined) {
    hooks.push(fn);
    return;
  }
  r[HOOKS] = [fn];
  res.on('close', runHooks);
}

function runHooks(this: WithHooks): void {
  const hooks = this[HOOKS];
  this[HOOKS] = undefined;
  if (hooks === undefined) return;
  const endedAt = performance.now();
  for (const fn of hooks) {
    try {
      fn(endedAt);
    } catch (err) {
      // One failing hook must not keep the others from running; the error still surfaces as before.
      queueMicrotask(() => {
        throw err;
      });
    }
  }
}
