import { createHash } from 'node:crypto';
import type { Logger } from '../logging.js';
import type { SourceConfig, SourceType } from './config.js';
import type { Claims } from './claims.js';
import type { Db, Queryable } from './db/db.js';
import { fetchSource, type Fetched } from './sources/fetch.js';
import { makeFilter, type FilterConfig } from './sources/filter.js';
import { replaceSourceServers } from './store/write.js';

/**
 * The sync coordinator. Every tick it walks the sources that are due (interval elapsed since the
 * last check) and, for each, takes a session advisory lock named after the source: with several
 * replicas on one database exactly one of them syncs a given source, and if that replica dies its
 * session ends and the lock is free again. The write is one transaction per source, so readers see
 * either the previous data or the new data, never half. An unchanged fetch (same hash, same filter)
 * only records the check, so it neither rewrites rows nor blocks other sources (both reference quirks).
 */
export interface SyncOptions {
  db: Db;
  logger: Logger;
  maxMetaSize: number;
  /** Upper bound between ticks; the actual period is also bounded by the shortest source interval. */
  maxTickMs?: number;
  /** Told about every sync that fetched (telemetry): seconds taken, success, servers stored. */
  onSync?: (source: string, seconds: number, success: boolean, servers?: number) => void;
}

interface DueRow {
  id: string;
  name: string;
  source_type: SourceType;
  source_config: Record<string, unknown> | null;
  filter_config: FilterConfig | null;
  claims: Claims | null;
  last_sync_hash: string | null;
  last_applied_filter_hash: string | null;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function sourceOf(r: DueRow): SourceConfig {
  return { name: r.name, type: r.source_type, [r.source_type]: r.source_config ?? {}, filter: r.filter_config ?? undefined } as SourceConfig;
}

export class SyncCoordinator {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly o: SyncOptions) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick()
        .catch((err) => this.o.logger.error({ err: (err as Error).message }, 'sync tick failed'))
        .then(async () => this.schedule(await this.nextDelay()));
    }, delay);
    this.timer.unref?.();
  }

  /** Until the next source falls due, within [250 ms, maxTick], with ±10% jitter so replicas spread. */
  private async nextDelay(): Promise<number> {
    const max = this.o.maxTickMs ?? 120_000;
    try {
      const rows = await this.o.db.query<{ ms: number | null }>(
        `SELECT (EXTRACT(EPOCH FROM min(COALESCE(rs.ended_at, now()) + s.sync_schedule - now())) * 1000)::float8 AS ms
           FROM source s JOIN registry_sync rs ON rs.source_id = s.id WHERE s.syncable`,
      );
      const ms = rows[0]?.ms ?? max;
      const base = Math.min(max, Math.max(250, ms + 50));
      return base * (0.95 + Math.random() * 0.1);
    } catch {
      return max;
    }
  }

  /** One pass over every due source. Exposed for tests and `--sync-once` style callers. */
  async tick(): Promise<void> {
    const due = await this.o.db.query<{ name: string }>(
      `SELECT s.name FROM source s JOIN registry_sync rs ON rs.source_id = s.id
        WHERE s.syncable AND (rs.ended_at IS NULL OR rs.ended_at + s.sync_schedule <= now())
        ORDER BY rs.ended_at NULLS FIRST, s.name`,
    );
    for (const d of due) {
      if (this.stopped) return;
      await this.syncOne(d.name);
    }
  }

  /** Syncs one source if it is still due and no other replica holds it. Returns what happened. */
  async syncOne(name: string, force = false): Promise<'synced' | 'unchanged' | 'skipped' | 'failed'> {
    return this.o.db.session(async (s) => {
      const got = await s.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtextextended('thv-registry-sync:' || $1, 0)) AS ok`, [name]);
      if (!got[0]?.ok) return 'skipped';
      try {
        // Re-read under the lock: another replica may have just finished this source.
        const rows = await s.query<DueRow>(
          `SELECT s.id, s.name, s.source_type, s.source_config, s.filter_config, s.claims, rs.last_sync_hash, rs.last_applied_filter_hash
             FROM source s JOIN registry_sync rs ON rs.source_id = s.id
            WHERE s.name = $1 AND s.syncable AND ($2 OR rs.ended_at IS NULL OR rs.ended_at + s.sync_schedule <= now())`,
          [name, force],
        );
        const row = rows[0];
        if (!row) return 'skipped';
        return await this.run(s, row);
      } finally {
        await s.query(`SELECT pg_advisory_unlock(hashtextextended('thv-registry-sync:' || $1, 0))`, [name]).catch(() => undefined);
      }
    });
  }

  private async run(s: Queryable & { tx<U>(f: (q: Queryable) => Promise<U>): Promise<U> }, row: DueRow): Promise<'synced' | 'unchanged' | 'failed'> {
    const log = this.o.logger.child({ source: row.name });
    await s.query(`UPDATE registry_sync SET sync_status = 'IN_PROGRESS', started_at = now(), attempt_count = attempt_count + 1 WHERE source_id = $1`, [row.id]);
    const started = Date.now();
    let stage = 'Fetch';
    try {
      const src = sourceOf(row);
      const fetched: Fetched = await fetchSource(src);
      const filterHash = sha(JSON.stringify(row.filter_config ?? null));
      if (fetched.hash === row.last_sync_hash && filterHash === row.last_applied_filter_hash) {
        await s.query(
          `UPDATE registry_sync SET sync_status = 'COMPLETED', error_msg = 'Sync completed successfully (no changes)', ended_at = now(), attempt_count = 0 WHERE source_id = $1`,
          [row.id],
        );
        log.debug('source unchanged');
        return 'unchanged';
      }
      stage = 'Storage';
      const keep = makeFilter(src.filter);
      const servers = fetched.servers.filter((x) => keep(x));
      const count = await s.tx(async (q) => {
        const n = await replaceSourceServers(q, row.id, servers, row.claims ?? undefined, this.o.maxMetaSize);
        await q.query(
          `UPDATE registry_sync SET sync_status = 'COMPLETED', error_msg = 'Sync completed successfully', ended_at = now(), last_success_at = now(),
             attempt_count = 0, last_sync_hash = $2, last_applied_filter_hash = $3, server_count = $4 WHERE source_id = $1`,
          [row.id, fetched.hash, filterHash, n],
        );
        return n;
      });
      log.info({ servers: count, ms: Date.now() - started }, 'source synced');
      this.o.onSync?.(row.name, (Date.now() - started) / 1000, true, count);
      return 'synced';
    } catch (err) {
      const msg = `${stage} failed: ${(err as Error).message}`;
      log.warn({ err: msg }, 'source sync failed');
      this.o.onSync?.(row.name, (Date.now() - started) / 1000, false);
      await s.query(`UPDATE registry_sync SET sync_status = 'FAILED', error_msg = $2, ended_at = now() WHERE source_id = $1`, [row.id, msg.slice(0, 2000)]);
      return 'failed';
    }
  }
}
