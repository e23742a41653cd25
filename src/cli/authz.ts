import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import { ErrorCodes, ThvError } from '../errors.js';
import { checkCase, evaluateCase, formatCaseLine, loadCases, type CaseResult } from '../authz/cases.js';
import { loadAuthzFile } from '../authz/load.js';
import { reportError } from './output.js';

/**
 * `thv authz test` and `thv authz check`: the proxy's authorization decisions, offline, for users' CI.
 *
 *   thv authz test --authz-config authz.yaml cases.yaml [--output json]
 *     one line per case and "N passed, M failed"; exit 1 on any mismatch.
 *   thv authz check --authz-config authz.yaml --request '{"method":"tools/call","params":{"name":"x"}}'
 *                   [--claims '{"sub":"alice"}'] [--server-name s] [--annotations '{...}'] [--response '{...}']
 *     prints allow or deny; exit 0 on allow, 1 on deny.
 * Exit 2: the config or the cases do not load (with the parser's message and line).
 */
export function registerAuthzCommand(program: Command, setExitCode: (code: number) => void): void {
  const authz = program.command('authz').description('Test Cedar authorization policies offline (the proxy decides the same way)');

  authz
    .command('test')
    .description(
      'Run policy test cases. The cases file (YAML or JSON) holds "cases:", each with name, claims, request ' +
        '{method, params}, optional server_name, annotations, response and expect_items, and expect: allow|deny.',
    )
    .argument('<cases>', 'cases file (.yaml, .yml or .json)')
    .requiredOption('--authz-config <file>', 'authorization config (JSON or YAML, cedarv1 or policyv1)')
    .option('--server-name <name>', 'server name for cases without server_name (resources get parent MCP::"<name>")', '')
    .option('--output <format>', 'text or json', 'text')
    .allowExcessArguments(false)
    .action((casesPath: string, opts: { authzConfig: string; serverName: string; output: string }) => {
      try {
        const format = outputFormat(opts.output);
        const { authorizer } = loadAuthzFile(opts.authzConfig);
        const cases = loadCases(casesPath);
        const results = cases.map((c) => evaluateCase(authorizer, c, opts.serverName));
        const passed = results.filter((r) => r.pass).length;
        const failed = results.length - passed;
        if (format === 'json') {
          process.stdout.write(`${JSON.stringify({ cases: results, passed, failed }, null, 2)}\n`);
        } else {
          for (const r of results) process.stdout.write(`${formatCaseLine(r)}\n`);
          process.stdout.write(`${passed} passed, ${failed} failed\n`);
        }
        setExitCode(failed > 0 ? 1 : 0);
      } catch (err) {
        setExitCode(reportError(err));
      }
    });

  authz
    .command('check')
    .description('Decide one request as the proxy would: prints allow or deny (exit 0 on allow, 1 on deny)')
    .requiredOption('--authz-config <file>', 'authorization config (JSON or YAML, cedarv1 or policyv1)')
    .requiredOption('--request <json>', 'the JSON-RPC request {method, params} (or @file)')
    .option('--claims <json>', 'the caller\'s token claims (or @file)', '{}')
    .option('--server-name <name>', 'the server name (resources get parent MCP::"<name>")', '')
    .option('--annotations <json>', 'tools/call: the tool\'s annotations as tools/list reported them (or @file)')
    .option('--response <json>', 'list methods: the server\'s result before filtering (or @file)')
    .option('--output <format>', 'text or json', 'text')
    .allowExcessArguments(false)
    .action(
      (opts: { authzConfig: string; request: string; claims: string; serverName: string; annotations?: string; response?: string; output: string }) => {
        try {
          const format = outputFormat(opts.output);
          const { authorizer } = loadAuthzFile(opts.authzConfig);
          const c = checkCase(
            {
              name: 'check',
              claims: jsonArg('--claims', opts.claims),
              request: jsonArg('--request', opts.request),
              ...(opts.serverName !== '' ? { server_name: opts.serverName } : {}),
              ...(opts.annotations !== undefined ? { annotations: jsonArg('--annotations', opts.annotations) } : {}),
              ...(opts.response !== undefined ? { response: jsonArg('--response', opts.response) } : {}),
              expect: 'allow',
            },
            'thv authz check',
          );
          const r: CaseResult = evaluateCase(authorizer, c);
          const { name: _n, expect: _e, pass: _p, ...answer } = r;
          if (format === 'json') process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
          else process.stdout.write(`${checkLine(r)}\n`);
          setExitCode(r.decision === 'allow' ? 0 : 1);
        } catch (err) {
          setExitCode(reportError(err));
        }
      },
    );
}

function checkLine(r: CaseResult): string {
  const why = r.policies.length > 0 ? ` (${r.policies.join(', ')})` : r.reason ? ` (${r.reason})` : '';
  const errs = r.errors.length > 0 ? ` [errors: ${r.errors.join('; ')}]` : '';
  const items = r.items_kept !== undefined ? ` items: [${r.items_kept.join(', ')}]` : '';
  return `${r.decision}${why}${items}${errs}`;
}

function outputFormat(v: string): 'text' | 'json' {
  if (v === 'text' || v === 'json') return v;
  throw new ThvError(ErrorCodes.InvalidArgument, `--output must be text or json, got ${JSON.stringify(v)}`);
}

/** A JSON (or YAML) value given inline or as @file. */
function jsonArg(flag: string, value: string): unknown {
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = readFileSync(value.slice(1), 'utf8');
    } catch (err) {
      throw new ThvError(ErrorCodes.InvalidArgument, `${flag}: cannot read ${value.slice(1)}: ${(err as Error).message}`);
    }
  }
  try {
    return parseYaml(text) as unknown;
  } catch (err) {
    throw new ThvError(ErrorCodes.InvalidArgument, `${flag}: not valid JSON: ${(err as Error).message.split('\n')[0]}`);
  }
}
