import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ErrorCodes, ThvError } from '../../src/errors.js';
import { loadToolsOverride, parseToolsOverride } from '../../src/config/tools-override.js';

let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'thv-tools-override-'));
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function write(content: string): string {
  const file = path.join(dir, 'override.json');
  fs.writeFileSync(file, content);
  return file;
}

function configError(fragment: string) {
  return (err: unknown) =>
    err instanceof ThvError &&
    err.code === ErrorCodes.InvalidConfig &&
    err.message.startsWith('failed to load tools override: ') &&
    err.message.includes(fragment);
}

describe('loadToolsOverride (spec §3.4)', () => {
  it('loads name and description overrides keyed by the actual tool name', () => {
    const file = write(
      JSON.stringify({
        toolsOverride: {
          fetch: { name: 'custom_fetch_tool', description: 'A customized fetch tool' },
          search: { description: 'Only the description changes' },
          read: { name: 'read_file' },
        },
      }),
    );
    assert.deepEqual(loadToolsOverride(file), {
      fetch: { name: 'custom_fetch_tool', description: 'A customized fetch tool' },
      search: { description: 'Only the description changes' },
      read: { name: 'read_file' },
    });
  });

  it('accepts an empty override map', () => {
    assert.deepEqual(loadToolsOverride(write('{"toolsOverride": {}}')), {});
  });

  it('fails when the file does not exist', () => {
    const missing = path.join(dir, 'missing.json');
    assert.throws(
      () => loadToolsOverride(missing),
      configError(`failed to open tools override file: open ${missing}: no such file or directory`),
    );
  });

  it('fails on invalid JSON', () => {
    assert.throws(() => loadToolsOverride(write('{"toolsOverride": {')), configError('failed to decode tools override file'));
  });

  it('reports "tools override are empty" when toolsOverride is absent or null', () => {
    assert.throws(() => loadToolsOverride(write('{}')), configError('tools override are empty'));
    assert.throws(() => loadToolsOverride(write('{"other": 1}')), configError('tools override are empty'));
    assert.throws(() => loadToolsOverride(write('{"toolsOverride": null}')), configError('tools override are empty'));
    assert.throws(() => loadToolsOverride(write('null')), configError('tools override are empty'));
  });

  it('rejects an entry with neither name nor description', () => {
    assert.throws(
      () => loadToolsOverride(write('{"toolsOverride": {"fetch": {}}}')),
      configError('tool override for fetch must have either Name or Description set'),
    );
    assert.throws(
      () => loadToolsOverride(write('{"toolsOverride": {"fetch": {"name": "", "description": ""}}}')),
      configError('tool override for fetch must have either Name or Description set'),
    );
    assert.throws(
      () => loadToolsOverride(write('{"toolsOverride": {"fetch": null}}')),
      configError('tool override for fetch must have either Name or Description set'),
    );
  });

  it('rejects values of the wrong type', () => {
    assert.throws(() => loadToolsOverride(write('[]')), configError('failed to decode tools override file'));
    assert.throws(() => loadToolsOverride(write('{"toolsOverride": []}')), configError('failed to decode tools override file'));
    assert.throws(() => loadToolsOverride(write('{"toolsOverride": {"fetch": "x"}}')), configError('failed to decode tools override file'));
    assert.throws(
      () => loadToolsOverride(write('{"toolsOverride": {"fetch": {"name": 3}}}')),
      configError('failed to decode tools override file'),
    );
  });

  it('matches keys case-insensitively and ignores unknown keys, like Go', () => {
    assert.deepEqual(parseToolsOverride('{"ToolsOverride": {"fetch": {"Name": "get", "extra": true}}, "x": 1}'), {
      fetch: { name: 'get' },
    });
  });
});
