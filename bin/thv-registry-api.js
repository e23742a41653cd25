#!/usr/bin/env node
import { main } from '../dist/cli/thv-registry-api.js';
main(process.argv).then((code) => { process.exitCode = code; });
