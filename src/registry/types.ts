import type { TransportType } from '../config/run-config.js';

/**
 * Registry data (spec §6.1). Files and URLs hold ToolHive's upstream format — the MCP registry
 * `server.json` objects under `data.servers`, with ToolHive's extras in
 * `_meta["io.modelcontextprotocol.registry/publisher-provided"]["io.github.stacklok"][<image or URL>]`.
 * Everything else in thv works on `RegistryEntry`, the flattened form (ToolHive's ImageMetadata /
 * RemoteServerMetadata).
 */

export const PUBLISHER_PROVIDED = 'io.modelcontextprotocol.registry/publisher-provided';
export const STACKLOK_NAMESPACE = 'io.github.stacklok';
export const UPSTREAM_SCHEMA_URL =
  'https://raw.githubusercontent.com/stacklok/toolhive-core/main/registry/types/data/upstream-registry.schema.json';

/** An environment variable (or header) an entry declares. */
export interface EnvVarDecl {
  name: string;
  description?: string;
  required: boolean;
  secret: boolean;
  default?: string;
}

export interface RegistryEntry {
  /** Full reverse-DNS name, e.g. `io.github.stacklok/fetch`. */
  name: string;
  title?: string;
  description: string;
  version?: string;
  status?: string;
  tier?: string;
  tags: string[];
  tools: string[];
  repositoryUrl?: string;
  kind: 'image' | 'remote';
  /** OCI image (container runtimes). */
  image?: string;
  /** npm package (`identifier[@version]`): what `npx://` runs on the process runtime. */
  npmPackage?: string;
  /** PyPI package (`identifier[@version]`): what `uvx://` runs on the process runtime. */
  pypiPackage?: string;
  transport: TransportType;
  targetPort?: number;
  proxyPort?: number;
  /** Permission profile object (spec §4.6). */
  permissions?: Record<string, unknown>;
  envVars: EnvVarDecl[];
  /** Default server arguments (used when `thv run` gets no `-- args`). */
  args?: string[];
  /** Remote entries. */
  url?: string;
  headers?: EnvVarDecl[];
  oauthConfig?: Record<string, unknown>;
  stateless?: boolean;
}

/** Where the entries came from (recorded in the RunConfig as provenance, spec §1.5 step 7). */
export interface RegistrySource {
  kind: 'builtin' | 'file' | 'url' | 'api';
  /** Path or URL; empty for the built-in catalog. */
  location: string;
}

/** Server JSON as found in files and API responses; only what thv reads is typed. */
export interface ServerJson {
  name?: unknown;
  title?: unknown;
  description?: unknown;
  version?: unknown;
  repository?: { url?: unknown };
  packages?: unknown;
  remotes?: unknown;
  _meta?: unknown;
  [key: string]: unknown;
}
