/**
 * `thv config otel set-|get-|unset-<setting>`: the `otel:` section of config.yaml, which gives `thv run`
 * its telemetry defaults when a `--otel-*` flag is not given (ToolHive's `thv config otel`).
 */
import type { Command } from 'commander';
import { ErrorCodes, ThvError } from '../errors.js';
import { loadAppConfig, updateAppConfig } from '../secrets/app-config.js';
import { OTEL_SECTION, otelSection } from '../telemetry/otel-app-config.js';
import { guarded } from './registry.js';

type Kind = 'url' | 'rate' | 'list' | 'bool';

/** Subcommand name → config.yaml key and value kind. */
const SETTINGS: ReadonlyArray<{ name: string; key: string; kind: Kind; help: string }> = [
  { name: 'endpoint', key: 'endpoint', kind: 'url', help: 'OTLP/HTTP endpoint (base URL, or host:port)' },
  { name: 'sampling-rate', key: 'sampling-rate', kind: 'rate', help: 'trace sampling rate, 0.0 to 1.0' },
  { name: 'env-vars', key: 'env-vars', kind: 'list', help: 'host environment variables copied onto spans (comma-separated)' },
  { name: 'insecure', key: 'insecure', kind: 'bool', help: 'export over plain HTTP' },
  { name: 'enable-prometheus-metrics-path', key: 'enable-prometheus-metrics-path', kind: 'bool', help: 'serve /metrics on the proxy port' },
  { name: 'tracing-enabled', key: 'tracing-enabled', kind: 'bool', help: 'export traces' },
  { name: 'metrics-enabled', key: 'metrics-enabled', kind: 'bool', help: 'export metrics' },
  { name: 'use-legacy-attributes', key: 'use-legacy-attributes', kind: 'bool', help: 'also write the legacy attribute names' },
];

function parseValue(kind: Kind, raw: string, name: string): unknown {
  switch (kind) {
    case 'url':
      if (raw.trim() === '') throw new ThvError(ErrorCodes.InvalidArgument, `${name} must not be empty`);
      return raw.trim();
    case 'rate': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new ThvError(ErrorCodes.InvalidArgument, `invalid sampling rate ${JSON.stringify(raw)}: must be between 0.0 and 1.0`);
      return n;
    }
    case 'list':
      return raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
    case 'bool': {
      const v = raw.trim().toLowerCase();
      if (['true', '1', 't', 'yes'].includes(v)) return true;
      if (['false', '0', 'f', 'no'].includes(v)) return false;
      throw new ThvError(ErrorCodes.InvalidArgument, `invalid boolean ${JSON.stringify(raw)}: use true or false`);
    }
  }
}

function show(value: unknown): string {
  return Array.isArray(value) ? value.join(',') : String(value);
}

export function registerOtelConfigCommands(config: Command, setExitCode: (code: number) => void): void {
  const otel = config.command('otel').description('Telemetry defaults for thv run (used when the --otel-* flag is not given)');
  for (const s of SETTINGS) {
    otel
      .command(`set-${s.name}`)
      .argument('<value>', s.help)
      .description(`Set the default ${s.help}`)
      .allowExcessArguments(false)
      .action(
        guarded(setExitCode, async (raw: string) => {
          const value = parseValue(s.kind, raw, s.name);
          await updateAppConfig((c) => {
            c[OTEL_SECTION] = { ...otelSection(c), [s.key]: value };
          });
          process.stdout.write(`Successfully set OpenTelemetry ${s.name}: ${show(value)}\n`);
        }),
      );
    otel
      .command(`get-${s.name}`)
      .description(`Show the default ${s.help}`)
      .allowExcessArguments(false)
      .action(
        guarded(setExitCode, async () => {
          const v = otelSection(await loadAppConfig())[s.key];
          if (v === undefined || (Array.isArray(v) && v.length === 0)) process.stdout.write(`No OpenTelemetry ${s.name} is currently configured.\n`);
          else process.stdout.write(`Current OpenTelemetry ${s.name}: ${show(v)}\n`);
        }),
      );
    otel
      .command(`unset-${s.name}`)
      .description(`Remove the default ${s.help}`)
      .allowExcessArguments(false)
      .action(
        guarded(setExitCode, async () => {
          await updateAppConfig((c) => {
            const section = { ...otelSection(c) };
            delete section[s.key];
            c[OTEL_SECTION] = Object.keys(section).length > 0 ? section : undefined;
          });
          process.stdout.write(`Successfully removed the OpenTelemetry ${s.name} configuration.\n`);
        }),
      );
  }
}
