import { ErrorCodes, ThvError } from '../errors.js';
import { AuthzConfigError, configErrorFor, parseAuthzConfig, readAuthzConfigFile, type AuthzConfig } from './config.js';
import { CedarAuthorizer, type AuthorizerOptions } from './engine.js';

/**
 * Loading an authorization config into a ready authorizer. Every problem is a ThvError
 * (InvalidConfig, exit 2) carrying the parser's message and, from a file, `file:line:col`.
 */

export interface LoadedAuthz {
  config: AuthzConfig;
  authorizer: CedarAuthorizer;
  /** The parsed document, as `thv run` stores it in the RunConfig (`authz_config`). */
  doc: unknown;
}

export function loadAuthzFile(path: string, options?: AuthorizerOptions): LoadedAuthz {
  const file = readAuthzConfigFile(path);
  try {
    const config = parseAuthzConfig(file.doc);
    return { config, authorizer: new CedarAuthorizer(config, options), doc: file.doc };
  } catch (err) {
    if (err instanceof AuthzConfigError) throw configErrorFor(file, err);
    throw err;
  }
}

/**
 * From a RunConfig's stored `authz_config`. When it fails and the source file is known and still
 * there, the file is read again to place the problem on a line.
 */
export function loadAuthzDoc(doc: unknown, sourcePath?: string, options?: AuthorizerOptions): LoadedAuthz {
  try {
    const config = parseAuthzConfig(doc);
    return { config, authorizer: new CedarAuthorizer(config, options), doc };
  } catch (err) {
    if (!(err instanceof AuthzConfigError)) throw err;
    if (sourcePath !== undefined) {
      try {
        loadAuthzFile(sourcePath, options);
      } catch (fileErr) {
        if (fileErr instanceof ThvError) throw fileErr;
      }
    }
    throw new ThvError(ErrorCodes.InvalidConfig, `invalid authorization configuration: ${err.message}`);
  }
}
