/**
 * One webhook call (spec §3.6): POST the envelope as JSON, sign it when an HMAC secret is configured,
 * bound the time and the response size, and classify the outcome for the stage.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import type { Identity } from '../../auth/identity.js';
import { parseSecretRef, userSecretsProvider } from '../../secrets/index.js';
import type { WebhookSpec } from './config.js';

export const ENVELOPE_VERSION = 'v0.1.0';
export const SIGNATURE_HEADER = 'X-ToolHive-Signature';
export const TIMESTAMP_HEADER = 'X-ToolHive-Timestamp';
/** Request and response bodies are limited to 1 MiB. */
export const MAX_WEBHOOK_BODY = 1024 * 1024;

export interface WebhookContext {
  serverName: string;
  sourceIp: string;
  transport: string;
}

export interface WebhookResponse {
  version?: string;
  uid?: string;
  allowed: boolean;
  code?: number;
  message?: string;
  reason?: string;
  details?: unknown;
  patch_type?: string;
  patch?: unknown;
}

/** What a call came to: an answer, an explicit 422 rejection, or a failure (network, timeout, 5xx, bad JSON). */
export type WebhookResult =
  | { kind: 'answer'; response: WebhookResponse }
  | { kind: 'rejected'; status: 422 }
  | { kind: 'failed'; reason: string };

/** `sha256=<hex HMAC-SHA256(secret, "<timestamp>." + body)>`. */
export function signature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

/** The principal as webhooks see it: who, never the token. */
function principal(identity: Identity | undefined): Record<string, unknown> | undefined {
  if (identity === undefined) return undefined;
  const c = identity.claims;
  const groups = Array.isArray(c.groups) ? c.groups : undefined;
  return { sub: identity.subject, name: identity.name, email: identity.email, groups, claims: c };
}

export function envelope(mcpRequest: unknown, identity: Identity | undefined, ctx: WebhookContext): { uid: string; body: string } {
  const uid = randomUUID();
  const body = JSON.stringify({
    version: ENVELOPE_VERSION,
    uid,
    timestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    principal: principal(identity),
    mcp_request: mcpRequest,
    context: { server_name: ctx.serverName, source_ip: ctx.sourceIp, transport: ctx.transport },
  });
  return { uid, body };
}

export class WebhookClient {
  private readonly agent: Agent;
  private secret: Promise<string | undefined> | undefined;

  constructor(readonly spec: WebhookSpec) {
    const t = spec.tls;
    this.agent = new Agent({
      connect: {
        ca: t.caBundlePath !== undefined ? readFileSync(t.caBundlePath) : undefined,
        cert: t.clientCertPath !== undefined ? readFileSync(t.clientCertPath) : undefined,
        key: t.clientKeyPath !== undefined ? readFileSync(t.clientKeyPath) : undefined,
        rejectUnauthorized: !t.insecureSkipVerify,
      },
      headersTimeout: spec.timeoutMs,
      bodyTimeout: spec.timeoutMs,
    });
  }

  /** The HMAC secret: read at start for file references, from the secrets provider on first use otherwise. */
  private hmacSecret(): Promise<string | undefined> {
    if (this.spec.hmacSecret !== undefined) return Promise.resolve(this.spec.hmacSecret);
    const ref = this.spec.hmacSecretRef;
    if (ref === undefined) return Promise.resolve(undefined);
    this.secret ??= (async () => (await userSecretsProvider()).get(parseSecretRef(ref).name))();
    return this.secret;
  }

  async call(body: string): Promise<WebhookResult> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    let secret: string | undefined;
    try {
      secret = await this.hmacSecret();
    } catch {
      this.secret = undefined; // try again next time; the reason may be temporary
      return { kind: 'failed', reason: 'HMAC secret unavailable' };
    }
    if (secret !== undefined) {
      const ts = String(Math.floor(Date.now() / 1000));
      headers[TIMESTAMP_HEADER] = ts;
      headers[SIGNATURE_HEADER] = signature(secret, ts, body);
    }
    const signal = AbortSignal.timeout(this.spec.timeoutMs);
    let res;
    try {
      res = await request(this.spec.url, { method: 'POST', headers, body, dispatcher: this.agent, signal });
    } catch (err) {
      return { kind: 'failed', reason: signal.aborted ? 'timeout' : (err as Error).message };
    }
    let text: string;
    try {
      text = await readLimited(res.body, MAX_WEBHOOK_BODY);
    } catch (err) {
      return { kind: 'failed', reason: signal.aborted ? 'timeout' : (err as Error).message };
    }
    if (res.statusCode === 422) return { kind: 'rejected', status: 422 };
    if (res.statusCode !== 200) return { kind: 'failed', reason: `HTTP ${res.statusCode}` };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { kind: 'failed', reason: 'invalid JSON response' };
    }
    if (parsed === null || typeof parsed !== 'object' || typeof (parsed as { allowed?: unknown }).allowed !== 'boolean') {
      return { kind: 'failed', reason: 'response without "allowed"' };
    }
    return { kind: 'answer', response: parsed as WebhookResponse };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

async function readLimited(body: AsyncIterable<Buffer> & { destroy?: () => void }, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy?.();
      throw new Error('response larger than 1 MiB');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
