/**
 * Source of the network helper that runs in the `<name>-egress` and `<name>-ingress` sidecars (Node, no
 * dependencies). No registry is assumed reachable, so instead of ToolHive's Squid image thv builds a
 * small image from this file on a local Node base image (see isolation.ts).
 *
 * Egress (THV_EGRESS_POLICY set): an HTTP forward proxy on :3128 for absolute-form requests and CONNECT.
 * A destination passes when it is not the Docker gateway (unless allowed) and the profile allows it:
 * `allowAll`, else every defined list must match (hosts: exact, or `.example.com` for subdomains; ports).
 * No list → nothing passes. The name is resolved once here and the connection goes to that address.
 * Ingress (THV_INGRESS_TARGET=host:port set): plain TCP forwarding from :8080 to the server container.
 */
export const HELPER_PROXY_SOURCE = String.raw`
import http from 'node:http';
import net from 'node:net';
import dns from 'node:dns/promises';

const log = (o) => process.stdout.write(JSON.stringify({ time: new Date().toISOString(), ...o }) + '\n');

if (process.env.THV_INGRESS_TARGET) {
  const [host, port] = process.env.THV_INGRESS_TARGET.split(':');
  net.createServer((client) => {
    const upstream = net.connect({ host, port: Number(port) });
    client.pipe(upstream).pipe(client);
    const end = () => { client.destroy(); upstream.destroy(); };
    client.on('error', end); upstream.on('error', end); client.on('close', end); upstream.on('close', end);
  }).listen(8080, '0.0.0.0', () => log({ msg: 'ingress listening', port: 8080, target: process.env.THV_INGRESS_TARGET }));
} else {
  const policy = JSON.parse(process.env.THV_EGRESS_POLICY || '{}');
  const hosts = (policy.hosts || []).map((h) => h.toLowerCase());
  const ports = policy.ports || [];
  const denyHosts = (policy.denyHosts || []).map((h) => h.toLowerCase());
  const denyIps = policy.denyIps || [];
  const hostMatches = (h) => hosts.some((a) => (a.startsWith('.') ? h === a.slice(1) || h.endsWith(a) : h === a));
  const allowedByPolicy = (host, port) => {
    if (denyHosts.includes(host)) return false;
    if (policy.allowAll) return true;
    if (hosts.length === 0 && ports.length === 0) return false;
    if (hosts.length > 0 && !hostMatches(host)) return false;
    if (ports.length > 0 && !ports.includes(port)) return false;
    return true;
  };
  // Resolves, then checks the address too (the gateway is refused by address, whatever name points at it).
  const decide = async (rawHost, port) => {
    const host = rawHost.replace(/^\[|\]$/g, '').toLowerCase();
    if (!allowedByPolicy(host, port)) return { ok: false, why: 'destination not allowed' };
    let address = host;
    if (!net.isIP(host)) {
      try { address = (await dns.lookup(host)).address; } catch (e) { return { ok: false, why: 'cannot resolve ' + host, status: 502 }; }
    }
    if (denyIps.includes(address)) return { ok: false, why: 'the Docker gateway is not allowed' };
    return { ok: true, address };
  };
  const server = http.createServer(async (req, res) => {
    let url;
    try { url = new URL(req.url); } catch { res.writeHead(400).end('absolute URL required\n'); return; }
    if (url.protocol !== 'http:') { res.writeHead(400).end('only http:// here; use CONNECT for https\n'); return; }
    const port = Number(url.port || 80);
    const d = await decide(url.hostname, port);
    log({ method: req.method, host: url.hostname, port, allowed: d.ok, why: d.why });
    if (!d.ok) { res.writeHead(d.status || 403, { 'content-type': 'text/plain' }).end('thv egress proxy: ' + d.why + '\n'); return; }
    const headers = { ...req.headers };
    delete headers['proxy-connection']; delete headers['proxy-authorization'];
    const up = http.request({ host: d.address, port, method: req.method, path: url.pathname + url.search, headers }, (ur) => {
      res.writeHead(ur.statusCode || 502, ur.headers);
      ur.pipe(res);
    });
    up.on('error', (e) => { if (!res.headersSent) res.writeHead(502).end('upstream error: ' + e.message + '\n'); else res.destroy(); });
    req.pipe(up);
  });
  server.on('connect', async (req, client, head) => {
    const idx = req.url.lastIndexOf(':');
    const host = req.url.slice(0, idx);
    const port = Number(req.url.slice(idx + 1));
    const d = await decide(host, port);
    log({ method: 'CONNECT', host, port, allowed: d.ok, why: d.why });
    if (!d.ok) { client.end('HTTP/1.1 ' + (d.status || 403) + ' Forbidden\r\ncontent-length: 0\r\n\r\n'); return; }
    const up = net.connect({ host: d.address, port }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head && head.length) up.write(head);
      up.pipe(client); client.pipe(up);
    });
    const end = () => { client.destroy(); up.destroy(); };
    up.on('error', end); client.on('error', end);
  });
  server.listen(3128, '0.0.0.0', () => log({ msg: 'egress proxy listening', port: 3128 }));
}
process.on('SIGTERM', () => process.exit(0));
`;
