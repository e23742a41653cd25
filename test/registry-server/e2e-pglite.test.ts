import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { e2eScenario } from './scenario.js';

// The embedded default: `database` names a directory, so the service opens PGlite there itself.
e2eScenario('PGlite', {
  async main() {
    const dir = mkdtempSync(join(tmpdir(), 'thv-rs-pglite-'));
    return { yaml: `database: ${join(dir, 'db')}\n`, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  },
});
