/** Inbound authentication shared by the proxy and the registry service. Explicit named exports only. */
export type { AuthProviderConfig } from './provider.js';
export type { Authenticator, AuthenticatorOptions } from './authenticator.js';
export { createAuthenticator } from './authenticator.js';
export type { AuthErrorCode } from './errors.js';
export { AuthError } from './errors.js';
export type { Identity } from './identity.js';
export { localUserIdentity, localUsername } from './identity.js';
export { extractBearerToken, MAX_TOKEN_LENGTH } from './bearer.js';
export { wwwAuthenticateHeader, resourceMetadataUrl } from './www-authenticate.js';
export { protectedResourceMetadata, PROTECTED_RESOURCE_METADATA_PATH } from './metadata.js';
export { isPrivateIp } from './private-ip.js';
export type { ServiceAccountProviderOptions } from './service-account.js';
export { serviceAccountProvider, DEFAULT_SERVICE_ACCOUNT_ISSUER, IN_CLUSTER_CA_FILE, IN_CLUSTER_TOKEN_FILE } from './service-account.js';
