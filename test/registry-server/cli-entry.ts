// Runs the thv-registry-api CLI from source (through tsx), so tests need no build.
import { main } from '../../src/cli/thv-registry-api.js';
main(process.argv).then((code) => {
  process.exitCode = code;
});
