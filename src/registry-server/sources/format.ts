/**
 * The data a source delivers: the ToolHive "upstream registry" document
 * (`{version, meta:{last_updated}, data:{servers:[ServerJSON]}}`), checked before anything is stored.
 */
export type ServerJSON = Record<string, unknown> & { name: string; version: string; description?: string };

export class SourceDataError extends Error {}

const SCHEMA_VERSION = /^\d+\.\d+\.\d+$/;

export function validateUpstreamRegistry(doc: unknown): ServerJSON[] {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new SourceDataError('registry data must be a JSON object');
  const d = doc as Record<string, unknown>;
  if (typeof d.version !== 'string' || !SCHEMA_VERSION.test(d.version)) throw new SourceDataError('version: must match ^\\d+\\.\\d+\\.\\d+$');
  const meta = d.meta as Record<string, unknown> | undefined;
  if (meta !== undefined && (typeof meta !== 'object' || meta === null)) throw new SourceDataError('meta: must be an object');
  if (meta?.last_updated !== undefined && (typeof meta.last_updated !== 'string' || Number.isNaN(Date.parse(meta.last_updated))))
    throw new SourceDataError('meta.last_updated: must be a date-time');
  const data = d.data as Record<string, unknown> | undefined;
  if (typeof data !== 'object' || data === null || !Array.isArray(data.servers)) throw new SourceDataError('data.servers: is required');
  if (data.servers.length === 0) throw new SourceDataError('upstream registry must contain at least one server');
  return data.servers.map((s, i) => checkServer(s, `data.servers[${i}]`));
}

export function checkServer(s: unknown, at: string): ServerJSON {
  if (typeof s !== 'object' || s === null || Array.isArray(s)) throw new SourceDataError(`${at}: must be an object`);
  const o = s as Record<string, unknown>;
  if (typeof o.name !== 'string' || o.name.trim() === '') throw new SourceDataError(`${at}.name: is required`);
  if (typeof o.description !== 'string' || o.description.trim() === '') throw new SourceDataError(`${at}.description: is required`);
  if (typeof o.version !== 'string' || o.version.trim() === '') throw new SourceDataError(`${at}.version: is required`);
  return o as ServerJSON;
}
