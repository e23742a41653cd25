/**
 * Container-orchestrator (Kubernetes) service-account tokens as an auth provider: the issuer is the
 * cluster's service-account issuer, keys come from the API server's JWKS endpoint, fetched with the
 * pod's own service-account token over TLS verified by the cluster CA. The API server lives at a
 * private address, so private IPs are allowed for this provider.
 */
import type { AuthProviderConfig } from './provider.js';

export const IN_CLUSTER_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';
export const IN_CLUSTER_CA_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt';
/** The default `--service-account-issuer` of most clusters. */
export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export interface ServiceAccountProviderOptions {
  name?: string;
  /** The cluster's service-account issuer (`iss` of its tokens). */
  issuer?: string;
  /** Audience the tokens must carry (a projected token's `audience`). */
  audience?: string;
  /** API server base URL; default from KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT. */
  apiServer?: string;
  /** JWKS URL; default `<apiServer>/openid/v1/jwks`. */
  jwksUrl?: string;
  caFile?: string;
  tokenFile?: string;
  env?: NodeJS.ProcessEnv;
}

export function serviceAccountProvider(options: ServiceAccountProviderOptions = {}): AuthProviderConfig {
  const env = options.env ?? process.env;
  let apiServer = options.apiServer;
  if (apiServer === undefined && options.jwksUrl === undefined) {
    const host = env.KUBERNETES_SERVICE_HOST;
    if (!host) throw new Error('service-account provider: not in a cluster (KUBERNETES_SERVICE_HOST is not set) and no apiServer or jwksUrl given');
    const port = env.KUBERNETES_SERVICE_PORT || '443';
    apiServer = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  }
  return {
    name: options.name ?? 'kubernetes',
    issuer: options.issuer ?? DEFAULT_SERVICE_ACCOUNT_ISSUER,
    audience: options.audience,
    jwksUrl: options.jwksUrl ?? `${apiServer!.replace(/\/$/, '')}/openid/v1/jwks`,
    caBundle: options.caFile ?? IN_CLUSTER_CA_FILE,
    authTokenFile: options.tokenFile ?? IN_CLUSTER_TOKEN_FILE,
    allowPrivateIp: true,
  };
}
