// Build steps tsc does not do: `clean` empties dist/; `copy-schema` copies the generated
// src/schema.d.ts beside the compiled files (tsc never emits a .d.ts it was given).
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const step = process.argv[2];
if (step === "clean") {
  rmSync(join(root, "dist"), { recursive: true, force: true });
} else if (step === "copy-schema") {
  mkdirSync(join(root, "dist"), { recursive: true });
  copyFileSync(join(root, "src", "schema.d.ts"), join(root, "dist", "schema.d.ts"));
} else {
  console.error(`usage: node scripts/dist.mjs clean|copy-schema (got ${step})`);
  process.exit(2);
}
