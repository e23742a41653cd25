#!/usr/bin/env node
/**
 * The client the official conformance suite drives (`conformance client --command ... --suite auth`).
 * The suite appends the URL of its test server and names the scenario in MCP_CONFORMANCE_SCENARIO.
 *
 * The MCP client under test is thv itself: this wrapper starts `thv run <url> --foreground
 * --remote-auth-skip-browser`, plays the browser for every authorization URL thv prints (the suite's
 * authorization server answers the authorize request with a redirect that carries the code), delivers
 * that redirect to thv's callback server, then lists tools and calls `test-tool` through thv's local
 * proxy with the SDK client, and stops thv. Exit status 0 when the tool call went through.
 *
 * THV_CONFORMANCE_NODE (the Node that runs thv: the project's own, not the suite's Node 22) and
 * THV_CONFORMANCE_LOG (a file collecting thv's output, for the test's assertions) come from the test.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const THV_BIN = fileURLToPath(new URL('../../bin/thv.js', import.meta.url));
const serverUrl = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};
const log = (line) => process.env.THV_CONFORMANCE_LOG && appendFileSync(process.env.THV_CONFORMANCE_LOG, `[${scenario}] ${line}\n`);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** The browser: request the authorization URL, take the redirect, deliver it to thv's callback. */
async function authorize(authUrl) {
  const res = await fetch(authUrl, { redirect: 'manual' });
  const location = res.headers.get('location');
  await res.body?.cancel();
  if (!location) throw new Error(`the authorization endpoint answered ${res.status} without a redirect`);
  const callback = new URL(location, authUrl);
  callback.hostname = '127.0.0.1';
  const page = await fetch(callback);
  await page.body?.cancel();
  log(`callback delivered: ${page.status}`);
}

async function main() {
  if (!serverUrl) throw new Error('usage: conformance-client.mjs <server-url>');
  const home = mkdtempSync(join(tmpdir(), 'thv-conformance-client-'));
  const callbackPort = await freePort();
  const args = ['run', '--foreground', '--name', 'conformance', '--remote-auth-skip-browser',
    '--remote-auth-callback-port', String(callbackPort), '--remote-auth-timeout', '20s'];
  if (context.client_id) args.push('--remote-auth-client-id', context.client_id);
  if (context.client_secret) args.push('--remote-auth-client-secret', context.client_secret);
  args.push(serverUrl);
  const child = spawn(process.env.THV_CONFORMANCE_NODE ?? process.execPath, [THV_BIN, ...args], {
    env: {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_DATA_HOME: join(home, 'data'),
      XDG_STATE_HOME: join(home, 'state'),
      XDG_CACHE_HOME: join(home, 'cache'),
      TOOLHIVE_SECRETS_PROVIDER: 'encrypted',
      TOOLHIVE_SECRETS_PASSWORD: 'conformance-client-store',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const authorizations = [];
  let resolveUrl;
  let rejectUrl;
  const proxyUrl = new Promise((resolve, reject) => ((resolveUrl = resolve), (rejectUrl = reject)));
  child.stdout.on('data', (d) => {
    out += d;
    const m = /available at (http:\/\/\S+)/.exec(out);
    if (m) resolveUrl(m[1]);
  });
  child.stderr.on('data', (d) => {
    const before = err.length;
    err += d;
    // Every authorization URL thv prints, at start or later (a scope step-up), is completed once.
    for (const m of err.slice(Math.max(0, before - 4096)).matchAll(/Please open this URL in your browser: (\S+)/g)) {
      if (authorizations.includes(m[1])) continue;
      authorizations.push(m[1]);
      authorize(m[1]).catch((e) => log(`authorization failed: ${e.message}`));
    }
  });
  child.on('close', (code) => rejectUrl(new Error(`thv exited with ${code} before serving`)));
  try {
    const url = await proxyUrl;
    const client = new Client({ name: 'thv-conformance-client', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    await client.listTools();
    await client.callTool({ name: 'test-tool', arguments: {} });
    await client.close();
    log('tool called through thv');
  } finally {
    if (child.exitCode === null) child.kill('SIGINT');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await new Promise((r) => (child.exitCode !== null ? r() : child.once('close', r)));
    clearTimeout(killer);
    log(`thv stdout:\n${out}\nthv stderr:\n${err}`);
    rmSync(home, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    log(`failed: ${e.message}`);
    console.error(e.message);
    process.exit(1);
  },
);
