import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { withReference } from "./reference.js";

/** `npm run docs:config`: rewrites the configuration reference table in README.md from the schema. */
const README = fileURLToPath(new URL("../../README.md", import.meta.url));
const updated = withReference(readFileSync(README, "utf8"));
if (updated === undefined) {
  process.stderr.write("README.md has no config-reference markers\n");
  process.exit(1);
}
writeFileSync(README, updated);
process.stdout.write("README.md: configuration reference written\n");
