import { createTestDatabase } from './helpers.js';
import { e2eScenario } from './scenario.js';

e2eScenario('PostgreSQL', {
  async main() {
    const db = await createTestDatabase();
    return { yaml: db.yaml, cleanup: () => db.drop() };
  },
});
