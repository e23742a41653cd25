/**
 * The reference ceiling of the bridge benchmark: the least an HTTP → stdio bridge in Node can do.
 * POST bodies go to the server's stdin as lines (corked per event-loop turn, as thv does), answers go
 * back by id as JSON. No validation, no sessions, no middleware, no errors handled: not a product, only
 * the cost of the architecture (one HTTP request and one pipe round trip per call) on this machine.
 *
 *   node bench/lib/min-bridge.mjs --proxy-port <port> <server command>
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';

const argv = process.argv;
const port = Number(argv[argv.indexOf('--proxy-port') + 1]);
const server = spawn(argv[argv.length - 1], [], { stdio: ['pipe', 'pipe', 'inherit'] });
const waiting = new Map();
let partial = '';
server.stdout.setEncoding('utf8');
server.stdout.on('data', (chunk) => {
  const lines = (partial + chunk).split('\n');
  partial = lines.pop();
  for (const line of lines) {
    if (line === '') continue;
    const id = String(JSON.parse(line).id);
    const res = waiting.get(id);
    if (res === undefined) continue;
    waiting.delete(id);
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'min' });
    res.end(line);
  }
});
let corked = false;
createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString();
    const id = JSON.parse(body).id;
    if (id === undefined) res.writeHead(202).end();
    else waiting.set(String(id), res);
    if (!corked) {
      corked = true;
      server.stdin.cork();
      setImmediate(() => {
        corked = false;
        server.stdin.uncork();
      });
    }
    server.stdin.write(`${body}\n`);
  });
}).listen(port, '127.0.0.1');
// stdio servers end on EOF (the group's SIGTERM alone may leave one running); half a second at most.
process.on('SIGTERM', () => {
  server.once('exit', () => process.exit(0));
  server.stdin.end();
  setTimeout(() => {
    server.kill('SIGKILL');
    process.exit(0);
  }, 500).unref();
});
