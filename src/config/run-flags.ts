/**
 * The `thv run` option surface: every flag of ToolHive's `thv run` (spec §1.1, §7.1, §7.4, §8.1) plus our
 * own (`--runtime`, `--stdio-sessions`, `--max-sessions`, `--debug`).
 *
 * Commander only collects raw values here; `parseRunOptions` (run-options.ts) validates them and applies
 * defaults. No flag has a commander default value, so an option that is `undefined` in `cmd.opts()` was not
 * given on the command line. That is how we know which flags were set explicitly (ToolHive's
 * `Flags().Changed`), which matters for `--from-config` conflicts, config.yaml telemetry fallbacks and
 * `--isolate-network` reconciliation. Defaults are therefore spelled out in the help texts instead.
 *
 * Go/pflag compatibility handled here:
 * - repeatable flags ("string arrays") collect one entry per occurrence, never split on commas
 *   (`--tools a,b` is one tool named `a,b`, quirk 14);
 * - comma-slice flags (`--oidc-scopes`, `--remote-auth-scopes`, `--token-exchange-scopes`) split on commas
 *   and accumulate across occurrences;
 * - boolean flags accept `--flag`, `--flag=true|false|1|0|t|f…` (strconv.ParseBool) and `--no-flag`;
 * - a short option may carry its value after `=` (`-e=KEY=VALUE`), as pflag allows.
 */
import { Option, type Command } from 'commander';
import { ErrorCodes, ThvError } from '../errors.js';

type FlagKind =
  /** Single value; the last occurrence wins. */
  | 'value'
  /** Boolean; `--x`, `--x=false`, `--no-x`. */
  | 'bool'
  /** Repeatable; one entry per occurrence. */
  | 'array'
  /** Comma-separated list; occurrences accumulate. */
  | 'slice';

interface FlagSpec {
  /** Long name without the leading dashes. */
  name: string;
  short?: string;
  kind: FlagKind;
  /** Placeholder shown in help for value flags. */
  arg?: string;
  help: string;
  group: string;
  hidden?: boolean;
}

const G_TRANSPORT = 'Transport and proxy options:';
const G_WORKLOAD = 'Workload options:';
const G_SERVER = 'Server environment options:';
const G_TOOLS = 'Tool options:';
const G_BUILD = 'Image and build options:';
const G_OIDC = 'Inbound authentication (OIDC) options:';
const G_POLICY = 'Authorization, audit and webhook options:';
const G_REMOTE = 'Remote server options:';
const G_TOKEN_EXCHANGE = 'Token exchange options:';
const G_OTEL = 'Telemetry options:';

/** Every flag of `thv run`, in help order. */
export const RUN_FLAG_SPECS: readonly FlagSpec[] = [
  // Transport and proxy
  { name: 'transport', kind: 'value', arg: 'type', group: G_TRANSPORT,
    help: 'MCP transport the server speaks: stdio, sse or streamable-http (default: registry value, else streamable-http; stdio for npx/uvx/go/local paths on the process runtime)' },
  { name: 'proxy-mode', kind: 'value', arg: 'mode', group: G_TRANSPORT,
    help: 'HTTP protocol the proxy offers clients for a stdio server: streamable-http or sse (deprecated) (default: streamable-http)' },
  { name: 'host', kind: 'value', arg: 'host', group: G_TRANSPORT,
    help: 'Address the proxy listens on: an IPv4 address or a hostname resolving to one (default: 127.0.0.1)' },
  { name: 'proxy-port', kind: 'value', arg: 'port', group: G_TRANSPORT,
    help: 'Port the proxy listens on; must be free (default: 0 = pick a free port)' },
  { name: 'target-port', kind: 'value', arg: 'port', group: G_TRANSPORT,
    help: 'Port an sse/streamable-http server listens on, passed as MCP_PORT (default: registry value, else a free port)' },
  { name: 'target-host', kind: 'value', arg: 'host', group: G_TRANSPORT,
    help: 'Host the proxy forwards to for sse/streamable-http servers, passed as MCP_HOST (default: 127.0.0.1)' },
  { name: 'publish', short: 'p', kind: 'array', arg: 'ports', group: G_TRANSPORT,
    help: 'Publish an extra container port, hostPort:containerPort or containerPort (repeatable)' },
  { name: 'network', kind: 'value', arg: 'mode', group: G_TRANSPORT,
    help: 'Container network mode: bridge, host, none or a network name (docker runtime)' },
  { name: 'isolate-network', kind: 'bool', group: G_TRANSPORT,
    help: 'Route container traffic through egress/ingress proxies that enforce the permission profile (default: true; --isolate-network=false to turn off)' },
  { name: 'allow-docker-gateway', kind: 'bool', group: G_TRANSPORT,
    help: 'With network isolation, let the container reach host.docker.internal and the bridge gateway (default: false)' },
  { name: 'allowed-origins', kind: 'array', arg: 'origin', group: G_TRANSPORT,
    help: 'Accept browser requests only from this Origin, scheme://host[:port] (repeatable; default: localhost origins when bound to loopback)' },
  { name: 'trust-proxy-headers', kind: 'bool', group: G_TRANSPORT,
    help: 'Trust X-Forwarded-Proto/Host/Port/Prefix from a reverse proxy when building SSE endpoint URLs (default: false)' },
  { name: 'endpoint-prefix', kind: 'value', arg: 'path', group: G_TRANSPORT,
    help: 'Path prefix, starting with "/", added to the endpoint URLs an SSE server announces (e.g. /playwright)' },
  { name: 'stateless', kind: 'bool', group: G_TRANSPORT,
    help: 'The server is stateless: forward POSTs only, answer GET and DELETE with 405 (sse/streamable-http servers; default: false)' },
  { name: 'session-ttl', kind: 'value', arg: 'duration', group: G_TRANSPORT,
    help: 'Close proxy sessions idle for this long, a Go duration such as 30m or 1h30m (default: 0 = 2h)' },
  { name: 'strict-protocol-validation', kind: 'bool', group: G_TRANSPORT,
    help: 'Reject requests whose MCP-Protocol-Version header is unknown with HTTP 400 (default: false)' },

  // Workload
  { name: 'name', kind: 'value', arg: 'name', group: G_WORKLOAD,
    help: 'Workload name (default: derived from the image, package or URL)' },
  { name: 'group', kind: 'value', arg: 'group', group: G_WORKLOAD,
    help: 'Group the workload belongs to; it must exist (default: default)' },
  { name: 'foreground', short: 'f', kind: 'bool', group: G_WORKLOAD,
    help: 'Run the proxy in this terminal until interrupted, then remove the workload (default: false)' },
  { name: 'from-config', kind: 'value', arg: 'file', group: G_WORKLOAD,
    help: 'Run a RunConfig exported with "thv export"; only --foreground and --debug may be combined with it' },
  { name: 'runtime', kind: 'value', arg: 'runtime', group: G_WORKLOAD,
    help: 'Where the server runs: auto, process or docker (default: $THV_RUNTIME, else auto)' },
  { name: 'stdio-sessions', kind: 'value', arg: 'mode', group: G_WORKLOAD,
    help: 'stdio servers: per-session starts one server process per client session so sampling, elicitation, roots, logging and progress reach the right client; shared runs one process for all sessions like ToolHive (default: per-session)' },
  { name: 'max-sessions', kind: 'value', arg: 'n', group: G_WORKLOAD,
    help: 'Most client sessions the proxy keeps open at once, 1 to 10000 (default: 100)' },
  { name: 'label', short: 'l', kind: 'array', arg: 'key=value', group: G_WORKLOAD,
    help: 'Add a label to the workload, key=value (repeatable; invalid labels are skipped with a warning)' },
  { name: 'debug', kind: 'bool', group: G_WORKLOAD,
    help: 'Log at debug level, here and in the background proxy (default: false)' },

  // Server environment
  { name: 'env', short: 'e', kind: 'array', arg: 'KEY=VALUE', group: G_SERVER,
    help: 'Set an environment variable for the server (repeatable)' },
  { name: 'env-file', kind: 'value', arg: 'file', group: G_SERVER,
    help: 'Read KEY=VALUE lines for the server environment from this file' },
  { name: 'env-file-dir', kind: 'value', arg: 'dir', group: G_SERVER,
    help: 'Read KEY=VALUE lines from every non-hidden file in this directory' },
  { name: 'secret', kind: 'array', arg: 'NAME,target=ENV', group: G_SERVER,
    help: 'Put the value of secret NAME into environment variable ENV when the server starts (repeatable)' },
  { name: 'volume', short: 'v', kind: 'array', arg: 'host:container[:ro]', group: G_SERVER,
    help: 'Mount a host path into the container, read-only with :ro (repeatable)' },
  { name: 'permission-profile', kind: 'value', arg: 'profile', group: G_SERVER,
    help: 'Permission profile: none, network, stdio or a JSON file path (default: registry value, else network)' },
  { name: 'ignore-globally', kind: 'bool', group: G_SERVER,
    help: 'Apply the global ignore patterns from ~/.config/toolhive/thvignore to mounted directories (default: true)' },
  { name: 'print-resolved-overlays', kind: 'bool', group: G_SERVER,
    help: 'Log the container paths hidden by .thvignore patterns (default: false)' },

  // Tools
  { name: 'tools', kind: 'array', arg: 'name', group: G_TOOLS,
    help: 'Expose only this tool, by its (possibly overridden) name (repeatable; commas are not separators)' },
  { name: 'tools-override', kind: 'value', arg: 'file', group: G_TOOLS,
    help: 'JSON file renaming or re-describing tools: {"toolsOverride": {"tool": {"name": "...", "description": "..."}}}' },

  // Image and build
  { name: 'image-verification', kind: 'value', arg: 'mode', group: G_BUILD,
    help: 'Check registry image provenance: warn, enabled or disabled (default: warn)' },
  { name: 'ca-cert', kind: 'value', arg: 'file', group: G_BUILD,
    help: 'CA certificate to trust while building npx://, uvx:// and go:// images' },
  { name: 'runtime-image', kind: 'value', arg: 'image', group: G_BUILD,
    help: 'Builder base image for npx://, uvx:// and go:// servers (e.g. node:22-alpine)' },
  { name: 'runtime-add-package', kind: 'array', arg: 'package', group: G_BUILD,
    help: 'Install an extra OS package in the builder image (repeatable)' },
  { name: 'build-with', kind: 'array', arg: 'spec', group: G_BUILD,
    help: 'Install an extra Python requirement next to a uvx:// package (repeatable)' },
  { name: 'k8s-pod-patch', kind: 'value', arg: 'json', group: G_BUILD, hidden: true,
    help: 'JSON patch for the Kubernetes pod template (Kubernetes only; ignored by thv)' },

  // Inbound authentication
  { name: 'oidc-issuer', kind: 'value', arg: 'url', group: G_OIDC,
    help: 'Require bearer tokens issued by this OIDC issuer' },
  { name: 'oidc-audience', kind: 'value', arg: 'audience', group: G_OIDC,
    help: 'Audience the bearer tokens must carry' },
  { name: 'oidc-jwks-url', kind: 'value', arg: 'url', group: G_OIDC,
    help: 'Fetch token signing keys from this JWKS URL (default: from the issuer discovery document)' },
  { name: 'oidc-introspection-url', kind: 'value', arg: 'url', group: G_OIDC,
    help: 'Validate opaque tokens with this RFC 7662 introspection endpoint' },
  { name: 'oidc-client-id', kind: 'value', arg: 'id', group: G_OIDC,
    help: 'OIDC client ID used for token introspection' },
  { name: 'oidc-client-secret', kind: 'value', arg: 'secret', group: G_OIDC,
    help: 'OIDC client secret used for token introspection (kept in memory, never written to disk)' },
  { name: 'oidc-scopes', kind: 'slice', arg: 'scopes', group: G_OIDC,
    help: 'Scopes advertised in the protected-resource metadata, comma-separated (default: openid)' },
  { name: 'oidc-insecure-allow-http', kind: 'bool', group: G_OIDC,
    help: 'Allow plain-HTTP OIDC issuers and key URLs, for local testing only (default: false)' },
  { name: 'resource-url', kind: 'value', arg: 'url', group: G_OIDC,
    help: 'Resource URL advertised in the RFC 9728 protected-resource metadata' },
  { name: 'thv-ca-bundle', kind: 'value', arg: 'file', group: G_OIDC,
    help: 'CA bundle to trust when fetching OIDC discovery documents and JWKS' },
  { name: 'jwks-auth-token-file', kind: 'value', arg: 'file', group: G_OIDC,
    help: 'File holding a bearer token to send when fetching JWKS and discovery documents' },
  { name: 'jwks-allow-private-ip', kind: 'bool', group: G_OIDC,
    help: 'Allow JWKS and discovery endpoints on private IP addresses (default: false)' },

  // Authorization, audit, webhooks
  { name: 'authz-config', kind: 'value', arg: 'file', group: G_POLICY,
    help: 'Authorize MCP calls with the Cedar policies in this JSON or YAML file' },
  { name: 'audit-config', kind: 'value', arg: 'file', group: G_POLICY,
    help: 'Write audit events as configured in this JSON file (enables auditing)' },
  { name: 'enable-audit', kind: 'bool', group: G_POLICY,
    help: 'Write audit events with the default audit configuration (default: false)' },
  { name: 'webhook-config', kind: 'array', arg: 'file', group: G_POLICY,
    help: 'Load mutating/validating webhooks from this YAML or JSON file (repeatable; later files win by name)' },

  // Remote servers
  { name: 'remote-auth', kind: 'bool', group: G_REMOTE,
    help: 'Enable OAuth to the remote server (thv run detects the need automatically; kept for compatibility)' },
  { name: 'remote-auth-client-id', kind: 'value', arg: 'id', group: G_REMOTE,
    help: 'Pre-registered OAuth client ID for the remote server' },
  { name: 'remote-auth-client-secret', kind: 'value', arg: 'secret', group: G_REMOTE,
    help: 'OAuth client secret for the remote server (kept in memory, never written to disk)' },
  { name: 'remote-auth-client-secret-file', kind: 'value', arg: 'file', group: G_REMOTE,
    help: 'File holding the OAuth client secret for the remote server' },
  { name: 'remote-auth-scopes', kind: 'slice', arg: 'scopes', group: G_REMOTE,
    help: 'OAuth scopes to request from the remote server, comma-separated' },
  { name: 'remote-auth-scope-param-name', kind: 'value', arg: 'name', group: G_REMOTE,
    help: 'Query parameter that carries the scopes in the authorize request (e.g. user_scope for Slack; default: scope)' },
  { name: 'remote-auth-skip-browser', kind: 'bool', group: G_REMOTE,
    help: 'Print the authorization URL instead of opening a browser (default: false)' },
  { name: 'remote-auth-timeout', kind: 'value', arg: 'duration', group: G_REMOTE,
    help: 'Longest time the interactive OAuth login may take, a Go duration (default: 30s)' },
  { name: 'remote-auth-callback-port', kind: 'value', arg: 'port', group: G_REMOTE,
    help: 'Local port for the OAuth redirect, 1024 to 65535 (default: 8666)' },
  { name: 'remote-auth-issuer', kind: 'value', arg: 'url', group: G_REMOTE,
    help: 'OAuth/OIDC issuer of the remote server (instead of --remote-auth-authorize-url/--remote-auth-token-url)' },
  { name: 'remote-auth-authorize-url', kind: 'value', arg: 'url', group: G_REMOTE,
    help: 'OAuth authorization endpoint of the remote server' },
  { name: 'remote-auth-token-url', kind: 'value', arg: 'url', group: G_REMOTE,
    help: 'OAuth token endpoint of the remote server' },
  { name: 'remote-auth-resource', kind: 'value', arg: 'uri', group: G_REMOTE,
    help: 'RFC 8707 resource indicator to request tokens for (default: the server URL when --resource-url is set)' },
  { name: 'remote-auth-bearer-token', kind: 'value', arg: 'token', group: G_REMOTE,
    help: 'Static bearer token for the remote server (kept in memory; also $TOOLHIVE_REMOTE_AUTH_BEARER_TOKEN)' },
  { name: 'remote-auth-bearer-token-file', kind: 'value', arg: 'file', group: G_REMOTE,
    help: 'File holding a static bearer token for the remote server' },
  { name: 'remote-forward-headers', kind: 'array', arg: 'Name=Value', group: G_REMOTE,
    help: 'Add this header to every request to the remote server; stored in plain text (repeatable)' },
  { name: 'remote-forward-headers-secret', kind: 'array', arg: 'Name=secret', group: G_REMOTE,
    help: 'Add a header whose value is read from the named secret at start (repeatable)' },

  // Token exchange
  { name: 'token-exchange-url', kind: 'value', arg: 'url', group: G_TOKEN_EXCHANGE,
    help: 'Exchange the client token at this RFC 8693 endpoint before forwarding (enables token exchange)' },
  { name: 'token-exchange-client-id', kind: 'value', arg: 'id', group: G_TOKEN_EXCHANGE,
    help: 'Client ID for the token exchange endpoint' },
  { name: 'token-exchange-client-secret', kind: 'value', arg: 'secret', group: G_TOKEN_EXCHANGE,
    help: 'Client secret for the token exchange endpoint (kept in memory; also $TOOLHIVE_TOKEN_EXCHANGE_CLIENT_SECRET)' },
  { name: 'token-exchange-client-secret-file', kind: 'value', arg: 'file', group: G_TOKEN_EXCHANGE,
    help: 'File holding the client secret for the token exchange endpoint' },
  { name: 'token-exchange-audience', kind: 'value', arg: 'audience', group: G_TOKEN_EXCHANGE,
    help: 'Audience to request for the exchanged token' },
  { name: 'token-exchange-scopes', kind: 'slice', arg: 'scopes', group: G_TOKEN_EXCHANGE,
    help: 'Scopes to request for the exchanged token, comma-separated' },
  { name: 'token-exchange-subject-token-type', kind: 'value', arg: 'type', group: G_TOKEN_EXCHANGE,
    help: 'Kind of token being exchanged: access_token, id_token, jwt or a full token-type URN (default: access_token)' },
  { name: 'token-exchange-header-name', kind: 'value', arg: 'header', group: G_TOKEN_EXCHANGE,
    help: 'Send the exchanged token in this header instead of replacing Authorization' },

  // Telemetry
  { name: 'otel-endpoint', kind: 'value', arg: 'url', group: G_OTEL,
    help: 'Export traces and metrics over OTLP/HTTP to this endpoint (e.g. https://api.honeycomb.io)' },
  { name: 'otel-headers', kind: 'array', arg: 'key=value', group: G_OTEL,
    help: 'Send this header with OTLP exports (repeatable)' },
  { name: 'otel-insecure', kind: 'bool', group: G_OTEL,
    help: 'Use plain HTTP for the OTLP endpoint (default: false)' },
  { name: 'otel-service-name', kind: 'value', arg: 'name', group: G_OTEL,
    help: 'Service name reported in telemetry (default: thv-<workload name>)' },
  { name: 'otel-tracing-enabled', kind: 'bool', group: G_OTEL,
    help: 'Export traces when an OTLP endpoint is set (default: true)' },
  { name: 'otel-metrics-enabled', kind: 'bool', group: G_OTEL,
    help: 'Export metrics when an OTLP endpoint is set (default: true)' },
  { name: 'otel-sampling-rate', kind: 'value', arg: 'rate', group: G_OTEL,
    help: 'Fraction of traces to sample, 0.0 to 1.0 (default: 0.1)' },
  { name: 'otel-env-vars', kind: 'array', arg: 'NAMES', group: G_OTEL,
    help: 'Host environment variables to attach to spans, comma-separated (repeatable)' },
  { name: 'otel-custom-attributes', kind: 'value', arg: 'k=v,...', group: G_OTEL,
    help: 'Extra resource attributes, comma-separated key=value pairs (e.g. region=us-east-1,team=platform)' },
  { name: 'otel-enable-prometheus-metrics-path', kind: 'bool', group: G_OTEL,
    help: 'Serve Prometheus metrics at /metrics (default: false)' },
  { name: 'otel-use-legacy-attributes', kind: 'bool', group: G_OTEL,
    help: 'Also emit the legacy attribute names next to the OpenTelemetry semantic-convention ones (default: true)' },
];

/** Names of the boolean flags (without dashes). */
const BOOL_FLAGS: ReadonlySet<string> = new Set(RUN_FLAG_SPECS.filter((f) => f.kind === 'bool').map((f) => f.name));
/** Long names of boolean flags by their short letter (`f` → `foreground`). */
const BOOL_SHORTS: ReadonlyMap<string, string> = new Map(
  RUN_FLAG_SPECS.filter((f) => f.short !== undefined && f.kind === 'bool').map((f) => [f.short as string, f.name]),
);
/** Short letters of flags that take a value. */
const VALUE_SHORTS: ReadonlySet<string> = new Set(
  RUN_FLAG_SPECS.filter((f) => f.short !== undefined && f.kind !== 'bool').map((f) => f.short as string),
);

/** commander's attribute name for a long flag: `otel-env-vars` → `otelEnvVars`. */
export function flagAttributeName(flag: string): string {
  return flag.replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** The long flag for a commander attribute name: `otelEnvVars` → `otel-env-vars`. */
export function attributeFlagName(attribute: string): string {
  return attribute.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

const collectArray = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

const collectSlice = (value: string, previous: string[] | undefined): string[] => [
  ...(previous ?? []),
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== ''),
];

/** strconv.ParseBool. */
function parseGoBool(value: string): boolean | undefined {
  switch (value) {
    case '1': case 't': case 'T': case 'true': case 'TRUE': case 'True':
      return true;
    case '0': case 'f': case 'F': case 'false': case 'FALSE': case 'False':
      return false;
    default:
      return undefined;
  }
}

/**
 * Rewrites pflag spellings commander does not understand, up to the first `--`:
 * `--bool-flag=false` → `--no-bool-flag`, `--bool-flag=true` → `--bool-flag`, `-f=false` → `--no-foreground`,
 * `-e=VALUE` → `-e VALUE`.
 * An unparsable boolean (`--stateless=maybe`) is a usage error.
 */
export function normaliseRunArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    const long = /^--([a-z0-9-]+)=(.*)$/s.exec(arg);
    const shortBool = /^-([A-Za-z])=(.*)$/s.exec(arg);
    const boolName = long !== null ? long[1] : shortBool !== null ? BOOL_SHORTS.get(shortBool[1] as string) : undefined;
    if (boolName !== undefined && BOOL_FLAGS.has(boolName)) {
      const value = ((long ?? shortBool) as RegExpExecArray)[2] as string;
      const parsed = parseGoBool(value);
      if (parsed === undefined) {
        throw new ThvError(ErrorCodes.InvalidArgument, `--${boolName}: expected true or false, got ${JSON.stringify(value)}`);
      }
      out.push(parsed ? `--${boolName}` : `--no-${boolName}`);
      continue;
    }
    if (shortBool !== null && VALUE_SHORTS.has(shortBool[1] as string)) {
      out.push(`-${shortBool[1]}`, shortBool[2] as string);
      continue;
    }
    out.push(arg);
  }
  return out;
}

/**
 * Registers every `thv run` flag on `cmd`. Values are collected raw (strings, booleans, string arrays) and
 * must be passed through `parseRunOptions`. Unknown options are not tolerated by default; a caller that wants
 * ToolHive's "unknown flags are ignored" behaviour can call `cmd.allowUnknownOption()` itself.
 */
export function addRunFlags(cmd: Command): Command {
  for (const spec of RUN_FLAG_SPECS) {
    const longFlag = `--${spec.name}`;
    const head = spec.short !== undefined ? `-${spec.short}, ${longFlag}` : longFlag;
    const flags = spec.kind === 'bool' ? head : `${head} <${spec.arg ?? 'value'}>`;
    const option = new Option(flags, spec.help).helpGroup(spec.group);
    if (spec.kind === 'array') option.argParser(collectArray);
    if (spec.kind === 'slice') option.argParser(collectSlice);
    if (spec.hidden === true) option.hideHelp();
    cmd.addOption(option);
    if (spec.kind === 'bool') {
      // `--no-x` (and `--x=false`, rewritten to it) sets the same attribute to false.
      cmd.addOption(new Option(`--no-${spec.name}`, `Same as ${longFlag}=false`).helpGroup(spec.group).hideHelp());
    }
  }

  // Accept pflag's `--flag=false` and `-e=VALUE` spellings (see normaliseRunArgs). commander calls
  // `this.parseOptions` for the command's own arguments, so wrapping it on this instance is enough.
  const parseOptions = cmd.parseOptions.bind(cmd);
  cmd.parseOptions = (args: string[]) => parseOptions(normaliseRunArgs(args));
  return cmd;
}

/**
 * Splits the raw process argv at the FIRST literal `--` (ToolHive's `parseCommandArguments`): `after` are the
 * arguments for the MCP server; `--` as the last token yields none. Without `--`, `after` is empty.
 */
export function splitServerArgs(argv: readonly string[]): { before: string[]; after: string[] } {
  const index = argv.indexOf('--');
  if (index === -1) return { before: [...argv], after: [] };
  return { before: argv.slice(0, index), after: argv.slice(index + 1) };
}
