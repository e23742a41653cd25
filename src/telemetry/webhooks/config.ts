/**
 * Webhooks as the proxy runs them, read from the RunConfig's `mutating_webhooks` / `validating_webhooks`
 * (already validated and merged by name when `thv run` built it; validated again here because a
 * RunConfig can be loaded from disk). Spec run-and-proxy §3.6.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { ErrorCodes, ThvError } from '../../errors.js';
import { parseDurationNs } from '../../config/run-options.js';

export type FailurePolicy = 'fail' | 'ignore';

export interface WebhookTls {
  caBundlePath?: string;
  clientCertPath?: string;
  clientKeyPath?: string;
  insecureSkipVerify: boolean;
}

export interface WebhookSpec {
  name: string;
  url: string;
  timeoutMs: number;
  failurePolicy: FailurePolicy;
  tls: WebhookTls;
  /** Where the HMAC secret comes from: an absolute file path or a secret reference (`name[,target=x]`). */
  hmacSecretRef?: string;
  /** The secret, when it could be read at start (file references). Never logged. */
  hmacSecret?: string;
}

export interface WebhookSet {
  mutating: WebhookSpec[];
  validating: WebhookSpec[];
}

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
const MIN_TIMEOUT_MS = 1_000;
const MAX_TIMEOUT_MS = 30_000;

function invalid(message: string): ThvError {
  return new ThvError(ErrorCodes.InvalidConfig, `invalid webhook configuration: ${message}`);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function timeoutMs(raw: unknown, at: string): number {
  if (raw === undefined || raw === null || raw === 0 || raw === '') return DEFAULT_WEBHOOK_TIMEOUT_MS;
  let ms: number;
  try {
    ms = typeof raw === 'number' ? raw / 1e6 : Number(parseDurationNs(String(raw))) / 1e6;
  } catch {
    throw invalid(`${at}: invalid timeout ${JSON.stringify(raw)}`);
  }
  if (!(ms >= MIN_TIMEOUT_MS && ms <= MAX_TIMEOUT_MS)) throw invalid(`${at}: timeout must be between 1s and 30s`);
  return ms;
}

export function parseWebhook(entry: unknown): WebhookSpec {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw invalid('each webhook must be an object');
  const e = entry as Record<string, unknown>;
  const name = str(e.name);
  if (name === undefined) throw invalid('webhook name is required');
  const at = `webhook ${JSON.stringify(name)}`;
  const url = str(e.url);
  if (url === undefined) throw invalid(`${at}: url is required`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(`${at}: invalid url`);
  }
  const tlsRaw = (e.tls_config ?? {}) as Record<string, unknown>;
  const tls: WebhookTls = {
    caBundlePath: str(tlsRaw.ca_bundle_path),
    clientCertPath: str(tlsRaw.client_cert_path),
    clientKeyPath: str(tlsRaw.client_key_path),
    insecureSkipVerify: tlsRaw.insecure_skip_verify === true,
  };
  if (parsed.protocol !== 'https:' && !(tls.insecureSkipVerify && parsed.protocol === 'http:')) {
    throw invalid(`${at}: url must use https unless tls_config.insecure_skip_verify is set`);
  }
  if ((tls.clientCertPath === undefined) !== (tls.clientKeyPath === undefined)) {
    throw invalid(`${at}: tls_config needs both client_cert_path and client_key_path`);
  }
  const policy = e.failure_policy;
  if (policy !== 'fail' && policy !== 'ignore') throw invalid(`${at}: failure_policy must be "fail" or "ignore"`);
  const spec: WebhookSpec = { name, url, timeoutMs: timeoutMs(e.timeout, at), failurePolicy: policy, tls };
  const ref = str(e.hmac_secret_ref);
  if (ref !== undefined) {
    spec.hmacSecretRef = ref;
    if (isAbsolute(ref)) {
      try {
        spec.hmacSecret = readFileSync(ref, 'utf8').trim();
      } catch (err) {
        throw invalid(`${at}: cannot read the HMAC secret file: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
      }
      if (spec.hmacSecret === '') throw invalid(`${at}: the HMAC secret file is empty`);
    }
  }
  return spec;
}

export function parseWebhooks(blocks: { mutating?: unknown[]; validating?: unknown[] }, _env: NodeJS.ProcessEnv): WebhookSet {
  return {
    mutating: (blocks.mutating ?? []).map(parseWebhook),
    validating: (blocks.validating ?? []).map(parseWebhook),
  };
}
