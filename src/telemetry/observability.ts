/**
 * Everything observability adds to a proxy, built once at start-up from the RunConfig blocks: the
 * audit stage, the webhook stages, the telemetry stage, the `/metrics` handler, and one `close` that
 * flushes and stops them all. src/proxy/start.ts puts the stages at their places in the chain.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TelemetryConfigJson } from '../config/run-config.js';
import type { Logger } from '../logging.js';
import { audit } from '../middleware/audit.js';
import { telemetry } from '../middleware/telemetry.js';
import { webhookStages } from '../middleware/webhooks.js';
import type { NamedMiddleware } from '../middleware/types.js';
import { parseAuditConfig } from './audit-config.js';
import { openAuditSink } from './audit-sink.js';
import { startTelemetry, type Telemetry } from './provider.js';
import { parseWebhooks } from './webhooks/config.js';

/** The RunConfig blocks observability is built from. */
export interface ObservabilityBlocks {
  /** RunConfig `audit_config` (camelCase object). */
  audit?: unknown;
  /** RunConfig `telemetry_config`. */
  telemetry?: TelemetryConfigJson;
  /** RunConfig `mutating_webhooks` / `validating_webhooks`. */
  webhooks?: { mutating?: unknown[]; validating?: unknown[] };
}

export interface ObservabilitySettings extends ObservabilityBlocks {
  /** Workload name. */
  name: string;
  /** `stdio`, `sse` or `streamable-http`. */
  transport: string;
  /** Legacy SSE towards clients (stdio with --proxy-mode sse, or an sse server). */
  sseTransport: boolean;
  trustProxyHeaders: boolean;
  /** The stdio bridge over Streamable HTTP: it reports the answers it sends (see AuditStageOptions). */
  answersReported?: boolean;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
}

export interface Observability {
  audit: NamedMiddleware | undefined;
  /** Mutating then validating. */
  webhooks: NamedMiddleware[];
  telemetry: NamedMiddleware | undefined;
  /** `/metrics` on the proxy port (Prometheus text), when enabled. */
  metrics: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  close(): Promise<void>;
}

/** Validates every block first (a bad file stops `thv run` before anything starts), then builds. */
export function buildObservability(s: ObservabilitySettings): Observability {
  const auditSettings = s.audit !== undefined && s.audit !== null ? parseAuditConfig(s.audit) : undefined;
  const hooks = s.webhooks !== undefined ? parseWebhooks(s.webhooks, s.env ?? process.env) : undefined;
  const closers: Array<() => Promise<void>> = [];

  let auditStage: NamedMiddleware | undefined;
  if (auditSettings?.enabled) {
    const sink = openAuditSink(auditSettings.logFile, s.logger);
    closers.push(() => sink.close());
    auditStage = audit({ settings: auditSettings, sink, serverName: s.name, sseTransport: s.sseTransport, trustProxyHeaders: s.trustProxyHeaders, answersReported: s.answersReported });
  }

  let webhooks: NamedMiddleware[] = [];
  if (hooks !== undefined && hooks.mutating.length + hooks.validating.length > 0) {
    const built = webhookStages(hooks, { serverName: s.name, transport: s.transport, logger: s.logger });
    webhooks = built.stages;
    closers.push(() => built.close());
  }

  let tel: Telemetry | undefined;
  if (s.telemetry !== undefined) {
    tel = startTelemetry(s.telemetry, { serverName: s.name, logger: s.logger, env: s.env ?? process.env });
    closers.push(() => tel!.shutdown());
  }
  const telemetryStage = tel !== undefined ? telemetry({ telemetry: tel, serverName: s.name, transport: s.transport, sseTransport: s.sseTransport }) : undefined;

  return {
    audit: auditStage,
    webhooks,
    telemetry: telemetryStage,
    metrics: tel?.metricsHandler,
    async close() {
      for (const close of closers.reverse()) {
        try {
          await close();
        } catch (err) {
          s.logger.warn({ err: (err as Error).message }, 'observability shutdown failed');
        }
      }
    },
  };
}
