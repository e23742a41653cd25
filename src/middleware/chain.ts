import type { Middleware, NamedMiddleware, ProxyContext } from './types.js';

/**
 * Composes stages into one function, index 0 outermost. Built once at start-up; per request it costs
 * one closure per stage that calls next.
 */
export function compose(stages: readonly NamedMiddleware[], terminal: (ctx: ProxyContext) => Promise<void>): (ctx: ProxyContext) => Promise<void> {
  const handlers: Middleware[] = stages.map((s) => s.handle);
  const n = handlers.length;
  return function run(ctx: ProxyContext): Promise<void> {
    const dispatch = (i: number): Promise<void> => {
      if (i === n) return terminal(ctx);
      return handlers[i]!(ctx, () => dispatch(i + 1));
    };
    return dispatch(0);
  };
}
