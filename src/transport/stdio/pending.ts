import type { ServerResponse } from 'node:http';
import type { MessageTransform, ProxyContext } from '../../middleware/types.js';
import type { JsonRpcId, JsonRpcMessage } from '../jsonrpc.js';
import type { SseWriter } from '../sse-writer.js';
import type { Session } from './session.js';

/** A client request on its way through a server process, waiting for the answer. */
export interface Pending {
  /** Key of the id as the server sees it (rewritten in shared mode). */
  upstreamKey: string;
  /** The id the client chose; restored on the way back. */
  clientId: JsonRpcId;
  /** True when the server saw another id than the client's. */
  idRewritten: boolean;
  session: Session | undefined;
  /** The POST that waits for the answer (Streamable HTTP). Absent for legacy SSE and internal requests. */
  res: ServerResponse | undefined;
  acceptJson: boolean;
  acceptSse: boolean;
  /** Open once the answer switched to an SSE stream. */
  sse: SseWriter | undefined;
  /** Extra headers for the first response bytes (a new Mcp-Session-Id). */
  headers: Record<string, string> | undefined;
  transforms: readonly MessageTransform[];
  /** The request's context while its POST waits (Streamable HTTP): told the answer's JSON when sent whole. */
  ctx: ProxyContext | undefined;
  /** Progress token key as the server sees it, when the request asked for progress. */
  progressKey: string | undefined;
  clientProgressToken: JsonRpcId | undefined;
  /** When the proxy gives up waiting (epoch ms); pushed back by every message streamed for it. */
  deadline: number;
  /** Internal requests of the proxy itself get their answer here instead of a client. */
  onAnswer: ((message: JsonRpcMessage) => void) | undefined;
  done: boolean;
}
