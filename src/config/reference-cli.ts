import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { configExample, withReference } from "./reference.js";

/**
 * `npm run docs:config`: rewrites the configuration reference table in
 * docs/reference/configuration.md and config/taskgate.example.yaml from the schema.
 */
const PAGE = fileURLToPath(new URL("../../docs/reference/configuration.md", import.meta.url));
const EXAMPLE = fileURLToPath(new URL("../../config/taskgate.example.yaml", import.meta.url));
const updated = withReference(readFileSync(PAGE, "utf8"));
if (updated === undefined) {
  process.stderr.write("docs/reference/configuration.md has no config-reference markers\n");
  process.exit(1);
}
writeFileSync(PAGE, updated);
writeFileSync(EXAMPLE, configExample());
process.stdout.write("docs/reference/configuration.md and config/taskgate.example.yaml: written from the schema\n");
