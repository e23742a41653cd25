#!/usr/bin/env node
import { main } from '../dist/cli/thv.js';
main(process.argv).then((code) => { process.exitCode = code; });
