import type { Command } from 'commander';
import { ErrorCodes, ThvError } from '../errors.js';
import { updateAppConfig } from '../secrets/app-config.js';
import { parseProviderType, PROVIDER_ENV, userSecretsProvider } from '../secrets/index.js';
import { canPrompt, promptHidden, readAllStdin } from '../secrets/prompt.js';
import { guardedAction } from './output.js';

/**
 * `thv secret set|get|list|delete|provider` (ToolHive's commands and messages). A value is read from
 * piped stdin or a hidden prompt, never from the command line, where it would end up in shell history
 * and in the process list.
 */
export function registerSecretCommand(program: Command, setExitCode: (code: number) => void): void {
  const action = guardedAction(setExitCode);
  const secret = program
    .command('secret')
    .alias('secrets')
    .summary('Manage secrets')
    .description('Manage secrets (values MCP servers get through --secret NAME,target=ENV_VAR)');

  secret
    .command('set')
    .argument('<name>', 'secret name')
    .summary('Set a secret (value from stdin or a hidden prompt)')
    .description(
      'Set a secret. The value is read from stdin when it is piped (one trailing newline is removed), e.g.\n' +
        '  echo "$TOKEN" | thv secret set github-token\n' +
        'otherwise you are asked for it (input hidden). Values are never taken from the command line.',
    )
    .allowExcessArguments(false)
    .action(
      action(async (name: string) => {
        let value: string;
        if (process.stdin.isTTY === true) {
          if (!canPrompt()) throw new ThvError(ErrorCodes.InvalidArgument, 'no terminal to ask for the secret value; pipe it to stdin');
          value = await promptHidden('Enter secret value (input will be hidden): ');
        } else {
          value = await readAllStdin();
        }
        if (value === '') throw new ThvError(ErrorCodes.InvalidArgument, 'secret value cannot be empty');
        const provider = await userSecretsProvider();
        await provider.set(name, value);
        process.stdout.write(`Secret ${name} set successfully\n`);
      }),
    );

  secret
    .command('get')
    .argument('<name>', 'secret name')
    .description('Print a secret (as "Secret <name>: <value>", like ToolHive)')
    .allowExcessArguments(false)
    .action(
      action(async (name: string) => {
        const provider = await userSecretsProvider();
        const value = await provider.get(name);
        process.stdout.write(`Secret ${name}: ${value}\n`);
      }),
    );

  secret
    .command('list')
    .description('List the names of the secrets (never their values)')
    .allowExcessArguments(false)
    .action(
      action(async () => {
        const provider = await userSecretsProvider();
        const names = await provider.list();
        if (names.length === 0) {
          process.stdout.write('No secrets found\n');
          return;
        }
        process.stdout.write(`Available secrets:\n${names.map((n) => `  - ${n}\n`).join('')}`);
      }),
    );

  secret
    .command('delete')
    .argument('<name>', 'secret name')
    .description('Delete a secret')
    .allowExcessArguments(false)
    .action(
      action(async (name: string) => {
        const provider = await userSecretsProvider();
        await provider.delete(name);
        process.stdout.write(`Secret ${name} deleted successfully\n`);
      }),
    );

  secret
    .command('provider')
    .argument('<name>', 'encrypted, environment or none (1password is not available in this version)')
    .summary('Configure the secrets provider')
    .description(
      'Configure the secrets provider (stored in config.yaml):\n' +
        '  encrypted    an AES-256-GCM encrypted file; the password comes from TOOLHIVE_SECRETS_PASSWORD or a prompt\n' +
        '  environment  read-only: secret NAME is the variable TOOLHIVE_SECRET_NAME\n' +
        '  none         no secrets',
    )
    .allowExcessArguments(false)
    .action(
      action(async (name: string) => {
        const type = parseProviderType(name);
        if (type === '1password') {
          throw new ThvError(ErrorCodes.NotImplemented, 'the 1password secrets provider is not available in this version of thv');
        }
        await updateAppConfig((config) => {
          const secrets = typeof config.secrets === 'object' && config.secrets !== null ? config.secrets : {};
          config.secrets = { ...secrets, provider_type: type, setup_completed: true };
        });
        process.stdout.write(`Secrets provider set to: ${type}\n`);
        if (process.env[PROVIDER_ENV]) {
          process.stderr.write(`Note: ${PROVIDER_ENV}=${process.env[PROVIDER_ENV]} overrides this setting in this environment\n`);
        }
      }),
    );
}
