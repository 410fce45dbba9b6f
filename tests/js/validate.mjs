// Validate glTF/GLB files with the Khronos glTF validator (npm gltf-validator).
// Usage: node validate.mjs FILE...   Prints one JSON object on stdout:
//   {"<file>": {"errors": n, "warnings": n, "infos": n, "hints": n, "messages": [{code, severity, pointer, message}]}}
// Severity: 0 error, 1 warning, 2 info, 3 hint. External buffers are read beside the file.
import fs from "node:fs";
import path from "node:path";
import validator from "gltf-validator";

const out = {};
for (const file of process.argv.slice(2)) {
  const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(file)), {
    uri: path.basename(file),
    maxIssues: 0,
    writeTimestamp: false,
    externalResourceFunction: async (uri) =>
      new Uint8Array(fs.readFileSync(path.resolve(path.dirname(file), decodeURIComponent(uri)))),
  });
  const issues = report.issues;
  out[file] = {
    errors: issues.numErrors,
    warnings: issues.numWarnings,
    infos: issues.numInfos,
    hints: issues.numHints,
    messages: issues.messages.map((m) => ({ code: m.code, severity: m.severity, pointer: m.pointer, message: m.message })),
  };
}
process.stdout.write(JSON.stringify(out));
