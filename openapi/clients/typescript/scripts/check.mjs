// `npm run check`: the package is in step with the OpenAPI document it is made from.
// 1. package.json's version is the document's info.version;
// 2. src/schema.d.ts is what `npm run generate` makes of the document now.
// Exits 1, saying what differs and how to fix it, when either does not hold.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const documentPath = join(root, "..", "..", "openapi.yaml");
const failures = [];

/** info.version of the document (written by PyYAML: `info:` at the top level, `  version: ...` in it). */
export function documentVersion(text) {
  let inInfo = false;
  for (const line of text.split(/\r?\n/)) {
    if (/^\S/.test(line)) inInfo = line.startsWith("info:");
    const found = inInfo && /^ {2}version:\s*(.+?)\s*$/.exec(line);
    if (found) return found[1].replace(/^(['"])(.*)\1$/, "$2");
  }
  return undefined;
}

const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const version = documentVersion(readFileSync(documentPath, "utf8"));
if (pkg.version !== version) {
  failures.push(
    `package.json's version is ${pkg.version} but openapi/openapi.yaml's info.version is ${version}: ` +
      `set "version" in openapi/clients/typescript/package.json (and package-lock.json: npm install) to ${version}`,
  );
}

const cli = join(root, "node_modules", "openapi-typescript", "bin", "cli.js");
const work = mkdtempSync(join(tmpdir(), "gin-rummy-schema-"));
try {
  const fresh = join(work, "schema.d.ts");
  execFileSync(process.execPath, [cli, documentPath, "--default-non-nullable", "false", "--output", fresh], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (readFileSync(fresh, "utf8") !== readFileSync(join(root, "src", "schema.d.ts"), "utf8")) {
    failures.push("src/schema.d.ts is not what openapi/openapi.yaml generates now: run `npm run generate` and commit it");
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

if (failures.length) {
  for (const failure of failures) console.error(`✗ ${failure}`);
  process.exit(1);
}
console.log(`✓ @gin-rummy/client ${pkg.version}: the version and src/schema.d.ts follow openapi/openapi.yaml`);
