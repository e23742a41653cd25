/**
 * One small database interface over both backends: PostgreSQL through `pg` (production, several
 * replicas) and PGlite (the embedded default). Every query in the service is plain SQL with `$n`
 * parameters that runs unchanged on both.
 */
export interface Queryable {
  /**
   * `prepare`: keep a named prepared statement per connection (PostgreSQL), for the hot read
   * queries whose planning costs more than their execution. PGlite ignores it.
   */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], prepare?: boolean): Promise<T[]>;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs `fn` in one transaction (READ COMMITTED); commits on success, rolls back on throw. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` on one dedicated connection, so that session state (advisory locks) holds across the
   * statements `fn` makes. If the process dies, PostgreSQL ends the session and releases the locks.
   */
  session<T>(fn: (q: Queryable & { tx<U>(f: (q: Queryable) => Promise<U>): Promise<U> }) => Promise<T>): Promise<T>;
  /** Multi-statement SQL without parameters (migrations). */
  exec(sql: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
