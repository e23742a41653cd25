import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyRegistryEnvVars } from '../../src/registry/env-vars.js';
import { EnvironmentProvider } from '../../src/secrets/environment-provider.js';
import type { RunConfig } from '../../src/config/run-config.js';
import type { EnvVarDecl } from '../../src/registry/types.js';

const base = { schema_version: 'v0.1.0', image: 'npx://x', name: 'x', transport: 'stdio', host: '127.0.0.1', port: 0 } as unknown as RunConfig;
const decl = (d: Partial<EnvVarDecl> & { name: string }): EnvVarDecl => ({ required: false, secret: false, ...d });
const noTty = { TOOLHIVE_DETACHED: '1' };
const noProvider = async (): Promise<never> => {
  throw new Error('no provider configured');
};

describe('registry environment variables', () => {
  it('given values win; defaults fill the gaps; secret defaults are not written in clear', async () => {
    const config = { ...base, env_vars: { FROM_FILE: 'file', MCP_TRANSPORT: 'stdio' }, secrets: ['s,target=FROM_SECRET'] };
    const out = await applyRegistryEnvVars(
      config,
      'srv',
      [
        decl({ name: 'FROM_FILE', required: true, default: 'd1' }),
        decl({ name: 'FROM_SECRET', required: true, secret: true }),
        decl({ name: 'WITH_DEFAULT', default: 'd2' }),
        decl({ name: 'SECRET_DEFAULT', secret: true, default: 'do-not-persist' }),
        decl({ name: 'OPTIONAL' }),
      ],
      { env: noTty, secretsProvider: noProvider },
    );
    assert.deepEqual(out.env_vars, { FROM_FILE: 'file', MCP_TRANSPORT: 'stdio', WITH_DEFAULT: 'd2' });
    assert.deepEqual(out.secrets, ['s,target=FROM_SECRET']);
  });

  it('a required secret stored under the variable\'s name is referenced, not copied', async () => {
    const provider = new EnvironmentProvider({ TOOLHIVE_SECRET_API_TOKEN: 'v' });
    const out = await applyRegistryEnvVars(base, 'srv', [decl({ name: 'API_TOKEN', required: true, secret: true })], {
      env: noTty,
      secretsProvider: async () => provider,
    });
    assert.deepEqual(out.secrets, ['API_TOKEN,target=API_TOKEN']);
    assert.equal(out.env_vars?.['API_TOKEN'], undefined);
  });

  it('without a terminal a missing required variable fails, naming it', async () => {
    await assert.rejects(
      applyRegistryEnvVars(base, 'io.example/srv', [decl({ name: 'NEEDED', required: true, description: 'the thing' })], { env: noTty, secretsProvider: noProvider }),
      /missing required environment variable: NEEDED \(the thing\) for io\.example\/srv/,
    );
  });
});
