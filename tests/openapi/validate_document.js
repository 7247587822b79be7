// The ctest openapi_valid: docs/openapi.json is a valid OpenAPI 3.1
// document for @apidevtools/swagger-parser: valid against the OpenAPI 3.1
// JSON Schema (with Ajv), every $ref resolved. A broken copy must fail, or
// the check proves nothing.
//
// Usage: node validate_document.js NODE_MODULES DOCUMENT
"use strict";
const path = require("path");
const fs = require("fs");
const SwaggerParser = require(path.join(process.argv[2], "@apidevtools/swagger-parser"));
const file = process.argv[3];

async function main() {
  const doc = JSON.parse(fs.readFileSync(file, "utf8"));
  const api = await SwaggerParser.validate(structuredClone(doc));
  const operations = Object.values(api.paths).reduce((n, p) => n + Object.keys(p).length, 0);
  console.log(`openapi_valid: ${file}: valid OpenAPI ${api.openapi}, ${Object.keys(api.paths).length} paths, ` +
              `${operations} operations`);

  // The same document with one parameter "in": "body" (OpenAPI 2's, not
  // 3.1's) and one dangling $ref: each must be refused.
  const [first] = Object.keys(doc.paths).filter((p) => p.includes("{project}"));
  const method = Object.keys(doc.paths[first])[0];
  const broken = structuredClone(doc);
  broken.paths[first][method].parameters[0].in = "body";
  const dangling = structuredClone(doc);
  dangling.components.schemas.error = { $ref: "#/components/schemas/no_such_schema" };
  for (const [what, copy] of [[`${method} ${first} with a parameter in "body"`, broken],
                              ["a $ref to a missing schema", dangling]]) {
    let refused = false;
    try {
      await SwaggerParser.validate(copy);
    } catch (e) {
      refused = true;
    }
    if (!refused) throw new Error(`the validator accepted ${what}: it checks nothing`);
    console.log(`openapi_valid: ${what} is refused, as it must be`);
  }
}

main().catch((e) => {
  console.error(`openapi_valid: ${file}: ${e.message || e}`);
  process.exit(1);
});
