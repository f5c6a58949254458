// SPDX-License-Identifier: MIT
// Validates glTF 2.0 files with the Khronos glTF validator (npm package gltf-validator, installed
// by `npm ci --prefix tests/tools/gltf`). Usage: node validate.mjs FILE...
// Prints one line per file: "FILE: errors=E warnings=W infos=I hints=H", then every error and
// warning as "  SEVERITY CODE POINTER: MESSAGE". Exit status: 0 when no file has an error,
// 1 when one has, 2 when the validator or a file cannot be loaded.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let validator;
try {
  validator = require('gltf-validator');
} catch (e) {
  console.error(`validate.mjs: the npm package gltf-validator is not installed (npm ci --prefix ${path.dirname(new URL(import.meta.url).pathname)}): ${e.message}`);
  process.exit(2);
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node validate.mjs FILE...');
  process.exit(2);
}
const names = ['error', 'warning', 'info', 'hint'];
let failed = false;
for (const file of files) {
  let bytes;
  try {
    bytes = new Uint8Array(fs.readFileSync(file));
  } catch (e) {
    console.error(`validate.mjs: ${file}: ${e.message}`);
    process.exit(2);
  }
  const report = await validator.validateBytes(bytes, {
    uri: path.basename(file),
    maxIssues: 0,  // no limit
    externalResourceFunction: (uri) => new Promise((resolve, reject) => {
      fs.readFile(path.resolve(path.dirname(file), decodeURIComponent(uri)),
                  (err, data) => (err ? reject(err.toString()) : resolve(new Uint8Array(data))));
    }),
  });
  const i = report.issues;
  console.log(`${file}: errors=${i.numErrors} warnings=${i.numWarnings} infos=${i.numInfos} hints=${i.numHints}`);
  for (const m of i.messages) {
    if (m.severity > 1) continue;
    console.log(`  ${names[m.severity]} ${m.code} ${m.pointer ?? ''}: ${m.message}`);
  }
  if (i.numErrors > 0) failed = true;
}
process.exit(failed ? 1 : 0);
