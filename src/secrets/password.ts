import { ErrorCodes, ThvError } from '../errors.js';
import { canPrompt, promptHidden } from './prompt.js';

/** The variable ToolHive reads the encrypted store's password from (also passed to detached proxies). */
export const PASSWORD_ENV = 'TOOLHIVE_SECRETS_PASSWORD';

/**
 * Where the password comes from, in ToolHive's order: TOOLHIVE_SECRETS_PASSWORD, the OS keyring, a prompt.
 *
 * The OS keyring: ToolHive keeps the password in the keyring (service `toolhive`). thv does not talk to a
 * keyring in this version (Node has no built-in client, and this machine runs no Secret Service), so the
 * password comes from the variable or the prompt. See docs/secrets.md.
 */
export async function getSecretsPassword(options: { env?: NodeJS.ProcessEnv; creating: boolean }): Promise<string> {
  const env = options.env ?? process.env;
  const fromEnv = env[PASSWORD_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  if (!canPrompt(env)) {
    throw new ThvError(ErrorCodes.InvalidArgument, 'the encrypted secrets store needs a password and there is no terminal to ask for it', {
      hint: `set ${PASSWORD_ENV} (thv does not use the OS keyring in this version)`,
    });
  }
  if (!options.creating) {
    const password = await promptHidden('Enter the password of your thv secrets store: ');
    if (password === '') throw new ThvError(ErrorCodes.InvalidArgument, 'password cannot be empty');
    return password;
  }
  process.stderr.write(
    'thv needs a password to encrypt your secrets (API tokens and other values MCP servers need).\n' +
      `It is not stored anywhere; set ${PASSWORD_ENV} to avoid this prompt.\n`,
  );
  const password = await promptHidden('Choose a password: ');
  if (password === '') throw new ThvError(ErrorCodes.InvalidArgument, 'password cannot be empty');
  const again = await promptHidden('Repeat the password: ');
  if (again !== password) throw new ThvError(ErrorCodes.InvalidArgument, 'the passwords do not match');
  return password;
}
