#!/usr/bin/env node
import { demoServerCommand } from "./command.js";

// Entry of the bundled demo upstream: `node dist/demo/main.js [--http PORT] [--host HOST]`.
demoServerCommand(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`demo server failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
