// bench/compare's side of the official JS Hub client (@huggingface/hub, installed in
// tests/hub-js by `make deps`).
//   node bench/compare-js.mjs upload HUB_URL TOKEN REPO DIR   uploadFiles of every file of DIR,
//                                                             streamed from disk, in one commit
//   node bench/compare-js.mjs download HUB_URL TOKEN REPO DIR snapshotDownload into DIR
import { readdir } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const hub = await import(
  pathToFileURL(join(here, "..", "tests", "hub-js", "node_modules", "@huggingface", "hub", "dist", "index.mjs")).href
);

const [mode, hubUrl, accessToken, name, dir] = process.argv.slice(2);
if (!mode || !hubUrl || !accessToken || !name || !dir) {
  console.error("usage: node compare-js.mjs upload|download HUB_URL TOKEN REPO DIR");
  process.exit(2);
}
const repo = { type: "model", name };

async function* walk(folder) {
  for (const item of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, item.name);
    if (item.isDirectory()) yield* walk(path);
    else if (item.isFile()) yield path;
  }
}

if (mode === "upload") {
  const files = [];
  for await (const path of walk(dir)) {
    files.push({ path: relative(dir, path), content: pathToFileURL(path) });
  }
  await hub.uploadFiles({ repo, hubUrl, accessToken, files, useXet: false, commitTitle: "bench" });
  console.log(`uploaded ${files.length} files`);
} else if (mode === "download") {
  const folder = await hub.snapshotDownload({ repo, hubUrl, accessToken, cacheDir: dir });
  console.log(folder);
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
