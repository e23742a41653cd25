/**
 * Which MCP revision a request speaks: "legacy" (sessions, initialize handshake) or "modern" (the
 * stateless 2026-07-28 revision, whose protocol metadata travels in every request's `_meta`). Follows
 * ToolHive's classification (run-and-proxy.md §2.4 step 7) so that the same requests are accepted and
 * refused, with the same JSON-RPC codes.
 */

export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Every revision `--strict-protocol-validation` admits in the `MCP-Protocol-Version` header. */
export const KNOWN_PROTOCOL_VERSIONS: ReadonlySet<string> = new Set([
  '2024-11-05',
  '2025-03-26',
  '2025-06-18',
  '2025-11-25',
  MODERN_PROTOCOL_VERSION,
]);

const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

/** JSON-RPC codes of the draft schema for refused Modern requests. */
export const REVISION_ERROR_CODES = {
  headerMismatch: -32020,
  missingClientCapability: -32021,
  unsupportedVersion: -32022,
  invalidParams: -32602,
} as const;

export interface RevisionError {
  code: number;
  message: string;
  data: Record<string, unknown>;
}

export type Revision = { era: 'legacy' } | { era: 'modern' } | { era: 'modern'; error: RevisionError };

const LEGACY: Revision = { era: 'legacy' };
const MODERN: Revision = { era: 'modern' };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Classifies one request. A Modern signal is the header naming the Modern revision, or any reserved
 * `io.modelcontextprotocol/*` key in `_meta` (a legacy client never sets them). A signalled request is
 * never downgraded to legacy: it is either a valid Modern request or refused. `initialize` is always
 * legacy, which also keeps a spoofed `_meta` from changing how a session starts.
 */
export function classifyRevision(method: string | undefined, params: Record<string, unknown> | undefined, header: string | undefined): Revision {
  if (method === 'initialize') return LEGACY;
  const meta = isObject(params) && isObject(params._meta) ? params._meta : undefined;
  const signalled =
    header === MODERN_PROTOCOL_VERSION ||
    (meta !== undefined && (META_PROTOCOL_VERSION in meta || META_CLIENT_INFO in meta || META_CLIENT_CAPABILITIES in meta));
  if (!signalled) return LEGACY;

  const version = meta?.[META_PROTOCOL_VERSION];
  if (typeof version !== 'string' || version === '') {
    return {
      era: 'modern',
      error: {
        code: REVISION_ERROR_CODES.invalidParams,
        message: `request carries a Modern signal but no valid ${META_PROTOCOL_VERSION} in _meta`,
        data: header ? { header } : {},
      },
    };
  }
  if (version !== MODERN_PROTOCOL_VERSION) {
    return {
      era: 'modern',
      error: {
        code: REVISION_ERROR_CODES.unsupportedVersion,
        message: `unsupported MCP protocol version "${version}" (supported: ${MODERN_PROTOCOL_VERSION})`,
        data: { supported: [MODERN_PROTOCOL_VERSION], requested: version },
      },
    };
  }
  if (header !== undefined && header !== '' && header !== version) {
    return {
      era: 'modern',
      error: {
        code: REVISION_ERROR_CODES.headerMismatch,
        message: `MCP-Protocol-Version header "${header}" does not match _meta protocol version "${version}"`,
        data: { header, body: version },
      },
    };
  }
  if (!isObject(meta?.[META_CLIENT_CAPABILITIES])) {
    return {
      era: 'modern',
      error: {
        code: REVISION_ERROR_CODES.missingClientCapability,
        message: 'request _meta is missing required client capabilities',
        data: { requiredCapabilities: {} },
      },
    };
  }
  return MODERN;
}
