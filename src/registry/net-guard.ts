import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ErrorCodes, ThvError } from '../errors.js';

/**
 * ToolHive refuses registry URLs that point into private networks unless `allow_private_registry_ip` is set
 * (spec §6.4): a registry URL from a config file must not turn thv into a probe of the local network.
 */

function isPrivateV4(ip: string): boolean {
  const [a, b] = ip.split('.').map(Number) as [number, number];
  return a === 10 || a === 127 || a === 0 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127);
}

export function isPrivateAddress(ip: string): boolean {
  if (isIP(ip) === 4) return isPrivateV4(ip);
  const lower = ip.toLowerCase();
  if (lower.startsWith('::ffff:')) return isPrivateAddress(lower.slice(7));
  return lower === '::1' || lower === '::' || lower.startsWith('fc') || lower.startsWith('fd') || lower.startsWith('fe80');
}

export async function assertPublicUrl(url: string, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) !== 0 ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
  if (addresses.some(isPrivateAddress)) {
    throw new ThvError(ErrorCodes.InvalidConfig, `the registry at ${url} is on a private or loopback address`, {
      hint: 'allow it with: thv config set-registry <url> --allow-private-ip',
    });
  }
}
