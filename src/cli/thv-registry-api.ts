import { createInterface } from 'node:readline/promises';
import { Command, Option } from 'commander';
import { ErrorCodes, ThvError } from '../errors.js';
import { createLogger, setRootLogger } from '../logging.js';
import { VERSION } from '../version.js';
import { reportError } from './output.js';

/** thv-registry-api: the registry service (MCP Registry API v0.1 + admin API). */
async function confirm(question: string, strict: boolean): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const a = (await rl.question(question)).trim().toLowerCase();
    return a === 'yes' || (!strict && a === 'y');
  } finally {
    rl.close();
  }
}

function logger() {
  const level = (process.env.THV_REGISTRY_LOG_LEVEL ?? process.env.LOG_LEVEL ?? 'info').toLowerCase();
  const known = ['debug', 'info', 'warn', 'error'];
  const l = level === 'warning' ? 'warn' : known.includes(level) ? level : 'info';
  const log = createLogger();
  log.level = l;
  setRootLogger(log);
  return log;
}

export async function main(argv: string[]): Promise<number> {
  const program = new Command('thv-registry-api')
    .description('Serve a registry of MCP servers over HTTP (MCP Registry API v0.1)')
    .version(VERSION)
    .option('--debug', 'debug logging')
    .exitOverride();

  program
    .command('serve')
    .description('Start the registry API server')
    .requiredOption('--config <file>', 'registry server configuration file')
    .option('--address <addr>', 'public address', ':8080')
    .option('--internal-address <addr>', 'internal address (/health, /readiness, /version)', ':8081')
    .addOption(new Option('--auth-mode <mode>', 'override auth.mode').choices(['anonymous', 'oauth']))
    .action(async (opts: { config: string; address: string; internalAddress: string; authMode?: 'anonymous' | 'oauth' }) => {
      const { loadConfig } = await import('../registry-server/config.js');
      const { startRegistry } = await import('../registry-server/server.js');
      const env = opts.authMode ? { ...process.env, THV_REGISTRY_AUTH_MODE: opts.authMode } : process.env;
      const config = loadConfig(opts.config, env);
      const log = logger();
      const running = await startRegistry({ config, logger: log, address: opts.address, internalAddress: opts.internalAddress });
      // One line on stdout for scripts and tests: where the servers listen.
      process.stdout.write(`${JSON.stringify({ url: running.url, internalUrl: running.internalUrl })}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          const t = setTimeout(() => process.exit(1), 30_000);
          t.unref();
          void running.close().finally(resolve);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });

  const migrate = program.command('migrate').description('Database migrations').requiredOption('--config <file>', 'registry server configuration file');
  migrate
    .command('up')
    .description('Apply every pending migration')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('-n, --num-steps <n>', 'ignored for up')
    .action(async (opts: { yes?: boolean }) => {
      const { loadConfig } = await import('../registry-server/config.js');
      const { openDatabase } = await import('../registry-server/db/open.js');
      const { migrateUp } = await import('../registry-server/db/migrations.js');
      const config = loadConfig(migrate.opts<{ config: string }>().config);
      if (!opts.yes && !(await confirm('Continue? (yes/no): ', false))) throw new ThvError(ErrorCodes.InvalidArgument, 'migration cancelled');
      const db = await openDatabase(config.database, logger(), 'migration');
      try {
        const applied = await migrateUp(db);
        process.stdout.write(applied.length ? `applied migrations: ${applied.join(', ')}\n` : 'no pending migrations\n');
      } finally {
        await db.close();
      }
    });
  migrate
    .command('down')
    .description('Revert the last --num-steps migrations')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('-n, --num-steps <n>', 'number of migrations to revert (required)', '0')
    .action(async (opts: { yes?: boolean; numSteps: string }) => {
      const n = Number(opts.numSteps);
      if (!Number.isInteger(n) || n <= 0) throw new ThvError(ErrorCodes.InvalidArgument, '--num-steps flag is required for down migrations (safety measure)');
      if (n >= 1000) throw new ThvError(ErrorCodes.InvalidArgument, 'num-steps must be less than 1000');
      const { loadConfig } = await import('../registry-server/config.js');
      const { openDatabase } = await import('../registry-server/db/open.js');
      const { migrateDown } = await import('../registry-server/db/migrations.js');
      const config = loadConfig(migrate.opts<{ config: string }>().config);
      if (!opts.yes && !(await confirm(`Revert ${n} migration(s)? Type 'yes' to continue: `, true))) throw new ThvError(ErrorCodes.InvalidArgument, 'migration cancelled');
      const db = await openDatabase(config.database, logger(), 'migration');
      try {
        const reverted = await migrateDown(db, n);
        process.stdout.write(reverted.length ? `reverted migrations: ${reverted.join(', ')}\n` : 'nothing to revert\n');
      } finally {
        await db.close();
      }
    });

  program
    .command('version')
    .description('Print version information')
    .option('--format <format>', 'json')
    .action((opts: { format?: string }) => {
      const info = { version: VERSION, commit: 'unknown', build_date: 'unknown', go_version: `node ${process.version}`, platform: `${process.platform}/${process.arch}` };
      process.stdout.write(opts.format === 'json' ? `${JSON.stringify(info, null, 2)}\n` : `thv-registry-api ${VERSION}\n`);
    });

  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    return reportError(err);
  }
}
