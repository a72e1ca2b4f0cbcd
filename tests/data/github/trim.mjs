// Trims GitHub's official OpenAPI document (npm @octokit/openapi, generated/api.github.com.json)
// to the issues and labels operations the site tests use, keeping every component they reference.
// One normalisation: `nullable: true` without a `type` beside it is dropped. OpenAPI 3.0.3 gives it
// no meaning there, and Prism's validator then silently skips the whole request body, so a test
// could not show that Prism rejects a request that breaks the document.
// Run from the repository root after `scripts/setup.sh --test`:
//   node tests/data/github/trim.mjs > tests/data/github/issues-and-labels.json
import { readFileSync } from "node:fs";

const source = "tests/tools/node_modules/@octokit/openapi/generated/api.github.com.json";
const full = JSON.parse(readFileSync(source, "utf8"));
const keep = [
  "/repos/{owner}/{repo}/issues",
  "/repos/{owner}/{repo}/issues/{issue_number}",
  "/repos/{owner}/{repo}/issues/{issue_number}/labels",
  "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
  "/repos/{owner}/{repo}/labels",
  "/repos/{owner}/{repo}/labels/{name}",
];
const paths = {};
for (const path of keep) {
  if (!full.paths[path]) throw new Error(`${source} has no path ${path}`);
  paths[path] = full.paths[path];
}
const components = {};
const pending = [paths];
while (pending.length > 0) {
  const value = pending.pop();
  if (value === null || typeof value !== "object") continue;
  for (const [key, child] of Object.entries(value)) {
    if (key === "$ref" && typeof child === "string" && child.startsWith("#/components/")) {
      const [, , section, name] = child.split("/");
      components[section] ??= {};
      if (!components[section][name]) {
        components[section][name] = full.components[section][name];
        pending.push(components[section][name]);
      }
    } else {
      pending.push(child);
    }
  }
}
const dropTypelessNullable = (value) => {
  if (value === null || typeof value !== "object") return;
  if (!Array.isArray(value) && value.nullable === true && value.type === undefined) delete value.nullable;
  Object.values(value).forEach(dropTypelessNullable);
};
dropTypelessNullable(paths);
dropTypelessNullable(components);
const trimmed = {
  openapi: full.openapi,
  info: { ...full.info, description: `${full.info.description} (trimmed to the issues and labels operations by tests/data/github/trim.mjs)` },
  servers: full.servers,
  tags: full.tags.filter((tag) => tag.name === "issues"),
  paths,
  components,
};
process.stdout.write(JSON.stringify(trimmed, null, 1) + "\n");
