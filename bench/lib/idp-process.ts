/**
 * Runs the test OpenID provider (test/helpers/oidc-provider.ts) in a child process, so that the
 * provider's own machinery (it enables AsyncLocalStorage, which taxes every promise in the process)
 * does not distort in-process measurements. The child prints one JSON line with what the benchmark
 * needs, including the RS256 private key so tokens can be minted without a round trip per token.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { JWK } from 'jose';

export interface IdpInfo {
  issuer: string;
  audience: string;
  caFile: string;
  jwksUrl: string;
  publicJwks: { keys: JWK[] };
  rsPrivateJwk: JWK;
  /** One JWT access token from the token endpoint. */
  accessToken: string;
}

const CHILD = `
import { exportJWK } from 'jose';
import { startTestIdp } from ${JSON.stringify(fileURLToPath(new URL('../../test/helpers/oidc-provider.ts', import.meta.url)))};
const idp = await startTestIdp();
const rsPrivateJwk = { ...(await exportJWK(idp.rsPrivateKey)), kid: 'rs-1', alg: 'RS256' };
process.stdout.write(JSON.stringify({ issuer: idp.issuer, audience: idp.audience, caFile: idp.caFile, jwksUrl: idp.jwksUrl,
  publicJwks: idp.jwks, rsPrivateJwk, accessToken: await idp.jwt('alice') }) + '\\n');
process.stdin.on('end', () => idp.close().then(() => process.exit(0)));
process.stdin.resume();
`;

export async function startIdpProcess(): Promise<{ info: IdpInfo; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const info = await new Promise<IdpInfo>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('the test IdP did not start in 30 s')), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(JSON.parse(out.slice(0, nl)) as IdpInfo);
      }
    });
    child.once('exit', (code) => reject(new Error(`the test IdP exited with ${code}`)));
  });
  return {
    info,
    async stop() {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.stdin!.end();
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    },
  };
}
