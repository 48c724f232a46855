import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { withErrorsReference } from "./errors-reference.js";

/** `npm run docs:errors`: rewrites the table of docs/reference/errors.md from the errors table. */
const PAGE = fileURLToPath(new URL("../../docs/reference/errors.md", import.meta.url));
const updated = withErrorsReference(readFileSync(PAGE, "utf8"));
if (updated === undefined) {
  process.stderr.write("docs/reference/errors.md has no errors-reference markers\n");
  process.exit(1);
}
writeFileSync(PAGE, updated);
process.stdout.write("docs/reference/errors.md: written from src/wire/errors.ts\n");
