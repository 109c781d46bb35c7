// The official JS client @huggingface/hub as a Xet witness against neuron-cache-test-hub --xet.
//   node xet_roundtrip.mjs upload HUB_URL TOKEN REPO DIR
//     uploads every file under DIR (paths relative to DIR) in one commit through Xet; fails
//     unless the client went through the CAS (xorbs and a shard) and no LFS PUT.
//   node xet_roundtrip.mjs download HUB_URL TOKEN REPO DIR
//     downloads every file of REPO that has a xetHash through the client's Xet path (XetBlob:
//     v2 reconstruction, xorb range fetches) into DIR; fails unless it took that path.
// REPO `buckets/<ns>/<name>` is a Storage Bucket: the upload goes through the client's
// commitIterBucket (Xet, then the batch API), the download lists the bucket's tree.
// Prints one JSON line of what it did (files, bytes, seconds, requests by route).
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";

let hub;
try {
  hub = await import("@huggingface/hub");
} catch (error) {
  console.error(`cannot load @huggingface/hub (${error.message}): run \`npm ci --prefix tests/hub-js\``);
  process.exit(1);
}

const [mode, hubUrl, accessToken, repo, dir] = process.argv.slice(2);
if (!["upload", "download"].includes(mode) || !hubUrl || !accessToken || !repo || !dir) {
  console.error("usage: node xet_roundtrip.mjs upload|download HUB_URL TOKEN REPO DIR");
  process.exit(2);
}

// Every request the client makes, by route, to prove which protocol path it took.
const routes = {};
const route = (url) => {
  const path = new URL(url).pathname;
  if (path.startsWith("/cas/v1/xorbs/")) return "cas_xorb";
  if (path.startsWith("/cas/v1/shards")) return "cas_shard";
  if (path.startsWith("/cas/v1/chunks/")) return "cas_chunks";
  if (/^\/cas\/v[12]\/reconstructions\//.test(path)) return "cas_reconstruction_" + path.split("/")[2];
  if (path.startsWith("/cas/xorb-data/")) return "cas_xorb_data";
  if (path.startsWith("/_lfs/")) return "lfs_put";
  if (/\/xet-(write|read)-token(\/|$)/.test(path)) return "xet_token";
  if (path.startsWith("/api/buckets/") && path.endsWith("/batch")) return "bucket_batch";
  if (path.endsWith("/info/lfs/objects/batch")) return "lfs_batch";
  if (path.includes("/resolve/")) return "resolve";
  if (path.includes("/commit/")) return "commit";
  return "other";
};
const fetchCounting = async (input, init = {}) => {
  const url = typeof input === "string" ? input : input.url;
  const response = await fetch(input, init);
  const name = route(url);
  routes[name] = (routes[name] ?? 0) + 1;
  if (!response.ok && response.status !== 404) {
    console.error(`${init.method ?? "GET"} ${new URL(url).pathname} -> ${response.status}`);
  }
  return response;
};
const credentials = { accessToken };
const started = process.hrtime.bigint();
const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;

async function* walk(root) {
  for (const entry of await readdir(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.isFile()) yield path;
  }
}

function fail(message) {
  console.error(`FAIL ${message} (requests: ${JSON.stringify(routes)})`);
  process.exit(1);
}

if (mode === "upload") {
  const files = [];
  let bytes = 0;
  for await (const path of walk(dir)) {
    const content = await readFile(path);
    bytes += content.length;
    files.push({ path: relative(dir, path), content: new Blob([content]) });
  }
  await hub.uploadFiles({
    hubUrl,
    credentials,
    repo,
    files,
    commitTitle: "JS client Xet upload",
    fetch: fetchCounting,
    useXet: true,
  });
  if (!routes.cas_xorb || !routes.cas_shard) fail("the upload did not go through the Xet CAS");
  if (routes.lfs_put) fail("the upload used LFS PUTs");
  if (repo.startsWith("buckets/") && !routes.bucket_batch) fail("the bucket upload sent no batch");
  console.log(JSON.stringify({ mode, files: files.length, bytes, seconds: seconds(), routes }));
} else {
  let files = 0;
  let bytes = 0;
  for await (const entry of hub.listFiles({ hubUrl, credentials, repo, recursive: true, fetch: fetchCounting })) {
    if (entry.type !== "file" || !entry.xetHash) continue;
    const blob = await hub.downloadFile({ hubUrl, credentials, repo, path: entry.path, fetch: fetchCounting });
    if (!blob) fail(`no ${entry.path}`);
    const content = Buffer.from(await blob.arrayBuffer());
    const target = join(dir, entry.path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content);
    files++;
    bytes += content.length;
  }
  if (files === 0) fail("no Xet file listed");
  if (!routes.cas_reconstruction_v2 || !routes.cas_xorb_data) fail("the download did not go through the Xet CAS");
  console.log(JSON.stringify({ mode, files, bytes, seconds: seconds(), routes }));
}
