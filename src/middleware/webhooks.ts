/**
 * The `mutating-webhook` and `validating-webhook` stages (ToolHive `pkg/webhook`, spec run-and-proxy
 * §3.6). They run after parsing and before telemetry and authorization, so that policies, audit and
 * telemetry see the request as the webhooks left it.
 *
 * Mutating webhooks run in order, each seeing the previous one's output; their JSON Patch is applied
 * to `{"mcp_request": …}` and may only touch `/mcp_request/…`. Then validating webhooks run in order.
 * Outcomes: 422 from a webhook always denies; failures (network, timeout, non-200, bad JSON, bad patch)
 * follow `failure_policy` (`ignore` → carry on unchanged, `fail` → deny / error).
 */
import type { Logger } from '../logging.js';
import { sendRawJson } from '../transport/http-util.js';
import { classify, type JsonRpcId, type JsonRpcMessage } from '../transport/jsonrpc.js';
import { envelope, MAX_WEBHOOK_BODY, WebhookClient, type WebhookContext } from '../telemetry/webhooks/client.js';
import type { WebhookSet } from '../telemetry/webhooks/config.js';
import { applyRequestPatch, PatchError } from '../telemetry/webhooks/patch.js';
import { describeMcpCall } from './mcp-parse.js';
import type { NamedMiddleware, ProxyContext } from './types.js';

export const MUTATING_WEBHOOK_STAGE = 'mutating-webhook';
export const VALIDATING_WEBHOOK_STAGE = 'validating-webhook';

export interface WebhookStageOptions {
  serverName: string;
  transport: string;
  logger: Logger;
}

export interface WebhookStages {
  stages: NamedMiddleware[];
  close(): Promise<void>;
}

function deny(ctx: ProxyContext, status: number, message: string): void {
  const id: JsonRpcId | undefined = ctx.mcp?.id;
  const body =
    id === undefined
      ? JSON.stringify({ jsonrpc: '2.0', error: { code: 403, message } })
      : JSON.stringify({ jsonrpc: '2.0', id, error: { code: 403, message } });
  sendRawJson(ctx.res, status, body);
}

function hookContext(ctx: ProxyContext, o: WebhookStageOptions): WebhookContext {
  const s = ctx.req.socket;
  const ip = s.remoteAddress ?? '';
  const host = ip.includes(':') ? `[${ip}]` : ip;
  return { serverName: o.serverName, sourceIp: `${host}:${s.remotePort ?? 0}`, transport: o.transport };
}

/** Only requests the MCP parser recognised go to webhooks (spec §3.6). */
function applies(ctx: ProxyContext): boolean {
  return ctx.message !== undefined && ctx.mcp !== undefined && ctx.mcp.method !== undefined;
}

function tooLarge(ctx: ProxyContext): boolean {
  return (ctx.body?.length ?? 0) > MAX_WEBHOOK_BODY;
}

export function webhookStages(set: WebhookSet, options: WebhookStageOptions): WebhookStages {
  const { logger } = options;
  const mutating = set.mutating.map((s) => new WebhookClient(s));
  const validating = set.validating.map((s) => new WebhookClient(s));
  const stages: NamedMiddleware[] = [];

  if (mutating.length > 0) {
    stages.push({
      name: MUTATING_WEBHOOK_STAGE,
      async handle(ctx, next) {
        if (!applies(ctx)) return next();
        if (tooLarge(ctx)) return deny(ctx, 413, 'Request too large for webhook processing');
        let current: JsonRpcMessage = ctx.message!;
        let changed = false;
        const hc = hookContext(ctx, options);
        for (const hook of mutating) {
          const { spec } = hook;
          const result = await hook.call(envelope(current, ctx.identity, hc).body);
          if (result.kind === 'rejected') return deny(ctx, 422, 'Request denied by webhook policy');
          if (result.kind === 'failed') {
            logger.warn({ webhook: spec.name, reason: result.reason, policy: spec.failurePolicy }, 'mutating webhook failed');
            if (spec.failurePolicy === 'fail') return deny(ctx, 500, 'Webhook error');
            continue;
          }
          const r = result.response;
          if (!r.allowed) {
            logger.debug({ webhook: spec.name, reason: r.reason }, 'mutating webhook denied the request');
            return deny(ctx, 403, 'Request denied by webhook policy');
          }
          if (r.patch === undefined || r.patch === null || (Array.isArray(r.patch) && r.patch.length === 0)) continue;
          try {
            if (r.patch_type !== 'json_patch') throw new PatchError(`unsupported patch_type ${JSON.stringify(r.patch_type)}`);
            const patched = applyRequestPatch(current, r.patch);
            if (classify(patched) === 'invalid') throw new PatchError('the patched request is not a JSON-RPC message');
            current = patched as JsonRpcMessage;
            changed = true;
          } catch (err) {
            logger.warn({ webhook: spec.name, err: (err as Error).message, policy: spec.failurePolicy }, 'mutating webhook patch rejected');
            if (spec.failurePolicy === 'fail') return deny(ctx, 500, 'Webhook error');
          }
        }
        if (changed) {
          // Re-parsed so that validating webhooks, telemetry, authz and audit see the mutated request;
          // the transport forwards the new message (with its new length).
          ctx.message = current;
          ctx.mcp = describeMcpCall(current, callKind(current));
          ctx.messageChanged = true;
          ctx.body = Buffer.from(JSON.stringify(current));
        }
        return next();
      },
    });
  }

  if (validating.length > 0) {
    stages.push({
      name: VALIDATING_WEBHOOK_STAGE,
      async handle(ctx, next) {
        if (!applies(ctx)) return next();
        if (tooLarge(ctx)) return deny(ctx, 413, 'Request too large for webhook processing');
        const hc = hookContext(ctx, options);
        for (const hook of validating) {
          const { spec } = hook;
          const result = await hook.call(envelope(ctx.message, ctx.identity, hc).body);
          if (result.kind === 'rejected') return deny(ctx, 403, 'Request denied by policy');
          if (result.kind === 'failed') {
            logger.warn({ webhook: spec.name, reason: result.reason, policy: spec.failurePolicy }, 'validating webhook failed');
            if (spec.failurePolicy === 'fail') return deny(ctx, 403, 'Request denied by policy');
            continue;
          }
          if (!result.response.allowed) {
            logger.debug({ webhook: spec.name, reason: result.response.reason }, 'validating webhook denied the request');
            return deny(ctx, 403, 'Request denied by policy');
          }
        }
        return next();
      },
    });
  }

  return {
    stages,
    async close() {
      await Promise.allSettled([...mutating, ...validating].map((h) => h.close()));
    },
  };
}

function callKind(message: JsonRpcMessage): 'request' | 'notification' | 'response' {
  const kind = classify(message);
  return kind === 'invalid' ? 'request' : kind;
}
