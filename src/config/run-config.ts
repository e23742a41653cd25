/**
 * ToolHive's RunConfig JSON (schema v0.1.0): what `thv run` persists, what `thv export` writes and what
 * `--from-config` reads. Keys and casing follow ToolHive exactly (oidc_config and ignore_config are
 * PascalCase there); fields we add are prefixed `thv_` so a ToolHive reader ignores them.
 */
export type TransportType = 'stdio' | 'sse' | 'streamable-http';
export type ProxyMode = 'sse' | 'streamable-http';
export type RuntimeKind = 'process' | 'docker';
/** How the stdio bridge maps client sessions onto server processes (our addition; see docs/stdio-sessions.md). */
export type StdioSessionMode = 'per-session' | 'shared';

export interface OidcConfigJson {
  Issuer?: string;
  Audience?: string;
  JWKSURL?: string;
  ClientID?: string;
  ClientSecret?: string;
  CACertPath?: string;
  AuthTokenFile?: string;
  AllowPrivateIP?: boolean;
  InsecureAllowHTTP?: boolean;
  IntrospectionURL?: string;
  ResourceURL?: string;
  Scopes?: string[];
}

export interface ToolOverride {
  name?: string;
  description?: string;
}

export interface MiddlewareConfigJson {
  type: string;
  parameters: Record<string, unknown>;
}

export interface TelemetryConfigJson {
  endpoint?: string;
  serviceName?: string;
  serviceVersion?: string;
  tracingEnabled?: boolean;
  metricsEnabled?: boolean;
  samplingRate?: string;
  headers?: Record<string, string>;
  insecure?: boolean;
  enablePrometheusMetricsPath?: boolean;
  environmentVariables?: string[];
  customAttributes?: Record<string, string>;
  useLegacyAttributes?: boolean;
}

export interface RunConfig {
  schema_version: string;
  image: string;
  remote_url?: string;
  /** Provenance of registry-sourced workloads (ToolHive keys). */
  registry_api_url?: string;
  registry_url?: string;
  registry_server_name?: string;
  cmd_args?: string[];
  name: string;
  container_name?: string;
  base_name?: string;
  transport: TransportType;
  host: string;
  port: number;
  target_port?: number;
  target_host?: string;
  allowed_origins?: string[];
  publish?: string[];
  permission_profile_name_or_path?: string;
  permission_profile?: Record<string, unknown>;
  env_vars?: Record<string, string>;
  debug?: boolean;
  volumes?: string[];
  container_labels?: Record<string, string>;
  oidc_config?: OidcConfigJson;
  token_exchange_config?: Record<string, unknown>;
  remote_auth_config?: Record<string, unknown>;
  authz_config?: unknown;
  authz_config_path?: string;
  audit_config?: unknown;
  audit_config_path?: string;
  telemetry_config?: TelemetryConfigJson;
  secrets?: string[];
  isolate_network?: boolean;
  allow_docker_gateway?: boolean;
  trust_proxy_headers?: boolean;
  strict_protocol_validation?: boolean;
  stateless?: boolean;
  session_ttl?: string;
  proxy_mode?: ProxyMode;
  thv_ca_bundle?: string;
  jwks_auth_token_file?: string;
  group?: string;
  tools_filter?: string[];
  tools_override?: Record<string, ToolOverride>;
  ignore_config?: { LoadGlobal: boolean; PrintOverlays: boolean };
  middleware_configs?: MiddlewareConfigJson[];
  validating_webhooks?: unknown[];
  mutating_webhooks?: unknown[];
  endpoint_prefix?: string;
  runtime_config?: Record<string, unknown>;
  header_forward?: Record<string, unknown>;
  /** Our additions (ignored by ToolHive). */
  thv_runtime?: RuntimeKind;
  thv_stdio_sessions?: StdioSessionMode;
  thv_max_sessions?: number;
}
