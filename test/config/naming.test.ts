import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCodes, ThvError } from '../../src/errors.js';
import {
  classifyServerArg,
  defaultWorkloadName,
  deriveRemoteName,
  goCleanPath,
  imageToWorkloadName,
  isRemoteUrl,
  localPathToWorkloadName,
  packageNameToImageName,
  registryNameToWorkloadName,
  sanitizeWorkloadName,
  validateWorkloadName,
  workloadNameProblem,
} from '../../src/config/naming.js';

describe('classifyServerArg (spec §1.2)', () => {
  it('treats http(s) URLs with a host as remote servers', () => {
    assert.deepEqual(classifyServerArg('https://api.github.com/mcp'), { kind: 'remote', url: 'https://api.github.com/mcp' });
    assert.deepEqual(classifyServerArg('http://localhost:8080/sse'), { kind: 'remote', url: 'http://localhost:8080/sse' });
    assert.equal(classifyServerArg('HTTPS://Example.com/mcp').kind, 'remote');
  });

  it('does not treat other schemes or host-less URLs as remote', () => {
    assert.equal(isRemoteUrl('ftp://example.com/x'), false);
    assert.equal(isRemoteUrl('http://'), false);
    assert.equal(classifyServerArg('ftp://example.com/x').kind, 'image-or-registry');
  });

  it('recognises the npx://, uvx:// and go:// protocol schemes', () => {
    assert.deepEqual(classifyServerArg('npx://@modelcontextprotocol/server-everything'), {
      kind: 'protocol',
      scheme: 'npx',
      pkg: '@modelcontextprotocol/server-everything',
    });
    assert.deepEqual(classifyServerArg('uvx://mcp-server-fetch@1.0'), { kind: 'protocol', scheme: 'uvx', pkg: 'mcp-server-fetch@1.0' });
    assert.deepEqual(classifyServerArg('go://./cmd/server'), { kind: 'protocol', scheme: 'go', pkg: './cmd/server' });
  });

  it('recognises local paths starting with ./, ../ or /', () => {
    for (const path of ['./server.js', '../tools/server.py', '/opt/mcp/server', '.', '..']) {
      assert.deepEqual(classifyServerArg(path), { kind: 'local-path', path });
    }
  });

  it('leaves everything else to the registry lookup', () => {
    for (const ref of ['fetch', 'io.github.stacklok/fetch', 'ghcr.io/github/github-mcp-server:latest', 'nginx']) {
      assert.deepEqual(classifyServerArg(ref), { kind: 'image-or-registry', ref });
    }
  });
});

describe('packageNameToImageName', () => {
  it('matches the spec example', () => {
    assert.equal(packageNameToImageName('@modelcontextprotocol/server-everything'), 'modelcontextprotocol-server-everything');
  });

  it('strips one leading ./ or ../ and replaces / @ . with -', () => {
    assert.equal(packageNameToImageName('./cmd/server'), 'cmd-server');
    assert.equal(packageNameToImageName('../x/y'), 'x-y');
    assert.equal(packageNameToImageName('mcp-server-fetch@1.2.3'), 'mcp-server-fetch-1-2-3');
    assert.equal(packageNameToImageName('github.com/acme/mcp'), 'github-com-acme-mcp');
  });

  it('falls back to toolhive-container when nothing is left', () => {
    assert.equal(packageNameToImageName(''), 'toolhive-container');
    assert.equal(packageNameToImageName('.'), 'toolhive-container');
    assert.equal(packageNameToImageName('@'), 'toolhive-container');
  });
});

describe('deriveRemoteName', () => {
  it('uses the second-to-last DNS label', () => {
    assert.equal(deriveRemoteName('https://api.github.com/mcp'), 'github');
    assert.equal(deriveRemoteName('https://github.com/mcp'), 'github');
    assert.equal(deriveRemoteName('https://mcp.deep.example.co/x?y=1'), 'example');
  });

  it('uses a single-label host as is', () => {
    assert.equal(deriveRemoteName('http://localhost:8080/mcp'), 'localhost');
  });

  it('names IP-address hosts after the whole address (deliberate difference)', () => {
    assert.equal(deriveRemoteName('http://127.0.0.1:3000/mcp'), '127-0-0-1');
    assert.equal(deriveRemoteName('http://[::1]:3000/mcp'), 'ipv6-1');
  });

  it('rejects a malformed URL', () => {
    assert.throws(() => deriveRemoteName('not a url'), (err: unknown) => err instanceof ThvError && err.code === ErrorCodes.InvalidArgument);
  });
});

describe('imageToWorkloadName (spec §1.3)', () => {
  const cases: Array<[string, string]> = [
    ['ghcr.io/github/github-mcp-server:latest', 'github-github-mcp-server'],
    ['nginx:latest', 'nginx'],
    ['nginx', 'nginx'],
    ['stacklok/fetch:1.0', 'stacklok-fetch'],
    ['docker.io/library/nginx', 'library-nginx'],
    ['registry.example.com/a/b/c/d:tag', 'c-d'],
    ['localhost:5000/foo', 'localhost-5000-foo'],
    ['ghcr.io/acme/server@sha256:abcdef', 'acme-server'],
    ['my_server.v2', 'my-server-v2'],
  ];
  for (const [image, expected] of cases) {
    it(`${image} → ${expected}`, () => assert.equal(imageToWorkloadName(image), expected));
  }
});

describe('registry and default names', () => {
  it('replaces . and / in registry names', () => {
    assert.equal(registryNameToWorkloadName('fetch'), 'fetch');
    assert.equal(registryNameToWorkloadName('io.github.stacklok/fetch'), 'io-github-stacklok-fetch');
  });

  it('defaultWorkloadName follows ToolHive for each kind of argument', () => {
    assert.equal(defaultWorkloadName('npx://@modelcontextprotocol/server-everything'), 'modelcontextprotocol-server-everything');
    assert.equal(defaultWorkloadName('uvx://mcp-server-fetch'), 'mcp-server-fetch');
    assert.equal(defaultWorkloadName('https://api.github.com/mcp'), 'github');
    assert.equal(defaultWorkloadName('fetch', { resolvedInRegistry: true }), 'fetch');
    assert.equal(defaultWorkloadName('io.github.stacklok/fetch', { resolvedInRegistry: true }), 'io-github-stacklok-fetch');
    assert.equal(defaultWorkloadName('ghcr.io/github/github-mcp-server:latest'), 'github-github-mcp-server');
    // With a ':' the registry rule does not apply even when resolved.
    assert.equal(defaultWorkloadName('stacklok/fetch:1.0', { resolvedInRegistry: true }), 'stacklok-fetch');
    assert.equal(defaultWorkloadName('./servers/weather.py'), 'weather');
  });

  it('names local paths after the file, or the directory for generic entry points', () => {
    assert.equal(localPathToWorkloadName('./servers/weather.py'), 'weather');
    assert.equal(localPathToWorkloadName('./weather/index.js'), 'weather');
    assert.equal(localPathToWorkloadName('/opt/my-server/'), 'my-server');
    assert.equal(localPathToWorkloadName('./server.js'), 'server');
    assert.equal(localPathToWorkloadName('./my_tool.mjs'), 'my-tool');
  });
});

describe('goCleanPath', () => {
  it('behaves like filepath.Clean', () => {
    assert.equal(goCleanPath(''), '.');
    assert.equal(goCleanPath('a//b/./c/..'), 'a/b');
    assert.equal(goCleanPath('/../x'), '/x');
    assert.equal(goCleanPath('../../x'), '../../x');
    assert.equal(goCleanPath('a/'), 'a');
  });
});

describe('sanitizeWorkloadName', () => {
  it('keeps valid names', () => {
    assert.deepEqual(sanitizeWorkloadName('fetch'), { name: 'fetch', changed: false });
    assert.deepEqual(sanitizeWorkloadName('my.server_1-x'), { name: 'my.server_1-x', changed: false });
    assert.deepEqual(sanitizeWorkloadName(''), { name: '', changed: false });
  });

  it('replaces invalid characters', () => {
    assert.deepEqual(sanitizeWorkloadName('my server'), { name: 'my-server', changed: true });
    assert.deepEqual(sanitizeWorkloadName('a;rm -rf'), { name: 'a-rm--rf', changed: true });
    assert.deepEqual(sanitizeWorkloadName('naïve'), { name: 'na-ve', changed: true });
  });

  it('neutralises paths', () => {
    assert.equal(sanitizeWorkloadName('../etc/passwd').name, '---etc-passwd');
    assert.equal(sanitizeWorkloadName('/abs/name').name, 'abs-name');
    assert.equal(sanitizeWorkloadName('a/./b').name, 'a-b');
    assert.equal(sanitizeWorkloadName('a\0b').name, 'ab');
    assert.equal(sanitizeWorkloadName('.').name, 'workload');
  });

  it('truncates to 100 characters', () => {
    const { name, changed } = sanitizeWorkloadName('x'.repeat(150));
    assert.equal(name.length, 100);
    assert.equal(changed, true);
  });
});

describe('validateWorkloadName', () => {
  const rejects = (name: string, fragment: string) => {
    assert.throws(
      () => validateWorkloadName(name),
      (err: unknown) =>
        err instanceof ThvError &&
        err.code === ErrorCodes.InvalidArgument &&
        err.message.startsWith('invalid workload name: ') &&
        err.message.includes(fragment),
    );
  };

  it('accepts valid names', () => {
    for (const name of ['fetch', 'my.server_1-x', 'a'.repeat(100), 'github-github-mcp-server']) {
      assert.doesNotThrow(() => validateWorkloadName(name));
      assert.equal(workloadNameProblem(name), undefined);
    }
  });

  it('reports the first problem', () => {
    rejects('', 'cannot be empty');
    rejects('../x', 'path traversal');
    rejects('..x', 'path traversal');
    rejects('/abs', 'path traversal');
    rejects('a/./b', 'path normalization');
    rejects('a$b', 'potentially dangerous characters');
    rejects('a`b`', 'potentially dangerous characters');
    rejects('my server', 'alphanumeric characters, dots, hyphens, and underscores');
    rejects('a/b', 'alphanumeric characters');
    rejects('x'.repeat(101), 'too long (max 100 characters)');
    rejects('.', 'cannot be "."');
    rejects('a\0b', 'null bytes');
  });
});
