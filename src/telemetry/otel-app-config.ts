/**
 * The `otel:` section of ToolHive's config.yaml (written by `thv config otel set-*`), which supplies
 * defaults for the `--otel-*` flags that were not given (spec §8.1). Keys as ToolHive writes them.
 */
import type { OtelConfigDefaults } from '../config/build-run-config.js';
import type { AppConfig } from '../secrets/app-config.js';

export const OTEL_SECTION = 'otel';

/** config.yaml key → what it holds. */
export const OTEL_KEYS = {
  endpoint: 'endpoint',
  samplingRate: 'sampling-rate',
  envVars: 'env-vars',
  insecure: 'insecure',
  enablePrometheusMetricsPath: 'enable-prometheus-metrics-path',
  tracingEnabled: 'tracing-enabled',
  metricsEnabled: 'metrics-enabled',
  useLegacyAttributes: 'use-legacy-attributes',
} as const satisfies Record<keyof OtelConfigDefaults, string>;

export function otelSection(config: AppConfig): Record<string, unknown> {
  const s = config[OTEL_SECTION];
  return s !== null && typeof s === 'object' && !Array.isArray(s) ? (s as Record<string, unknown>) : {};
}

/** The defaults for buildRunConfig; values of the wrong type are ignored. */
export function otelDefaultsFromAppConfig(config: AppConfig): OtelConfigDefaults {
  const s = otelSection(config);
  const bool = (k: string): boolean | undefined => (typeof s[k] === 'boolean' ? (s[k] as boolean) : undefined);
  const envVars = s[OTEL_KEYS.envVars];
  const rate = s[OTEL_KEYS.samplingRate];
  return {
    endpoint: typeof s[OTEL_KEYS.endpoint] === 'string' ? (s[OTEL_KEYS.endpoint] as string) : undefined,
    samplingRate: typeof rate === 'number' ? rate : undefined,
    envVars: Array.isArray(envVars) ? envVars.filter((v): v is string => typeof v === 'string') : undefined,
    insecure: bool(OTEL_KEYS.insecure),
    enablePrometheusMetricsPath: bool(OTEL_KEYS.enablePrometheusMetricsPath),
    tracingEnabled: bool(OTEL_KEYS.tracingEnabled),
    metricsEnabled: bool(OTEL_KEYS.metricsEnabled),
    useLegacyAttributes: bool(OTEL_KEYS.useLegacyAttributes),
  };
}
