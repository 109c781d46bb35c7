// Fidelity of neuron-cache-test-hub, checked with the official JS client @huggingface/hub.
// usage: node fidelity.mjs HUB_URL OWNER_WRITE_TOKEN OTHER_READ_TOKEN
// The server must run with --lfs-threshold 1024 --multipart-chunk-size 5000 --page-size 3.
// Prints one "ok"/"FAIL" line per check; exits 1 on any failure.
import { createHash, randomBytes } from "node:crypto";

let hub;
try {
  hub = await import("@huggingface/hub");
} catch (error) {
  console.error(`FAIL cannot load @huggingface/hub (${error.message}): run \`npm ci --prefix tests/hub-js\``);
  process.exit(1);
}

const [hubUrl, ownerToken, otherToken] = process.argv.slice(2);
if (!hubUrl || !ownerToken || !otherToken) {
  console.error("usage: node fidelity.mjs HUB_URL OWNER_WRITE_TOKEN OTHER_READ_TOKEN");
  process.exit(2);
}

let failures = 0;
async function check(name, body) {
  try {
    const detail = await body();
    console.log(`ok   ${name}${detail ? ` (${detail})` : ""}`);
  } catch (error) {
    failures++;
    console.log(`FAIL ${name}: ${error?.stack ?? error}`);
  }
}
function expect(condition, message) {
  if (!condition) throw new Error(message);
}
function equal(actual, expected, what) {
  expect(actual === expected, `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

// Every request the client makes, to prove which protocol paths it took.
const requests = [];
const loggingFetch = async (input, init = {}) => {
  const url = input instanceof URL ? input.href : typeof input === "string" ? input : input.url;
  const method = init.method ?? "GET";
  const response = await fetch(input, init);
  requests.push({ method, path: new URL(url).pathname, status: response.status });
  return response;
};
const requestsSince = (mark, predicate) => requests.slice(mark).filter(predicate);

const owner = { hubUrl, accessToken: ownerToken, fetch: loggingFetch };
const other = { hubUrl, accessToken: otherToken, fetch: loggingFetch };

const gitBlobSha1 = (bytes) =>
  createHash("sha1").update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes])).digest("hex");
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
const lfsPointer = (bytes) =>
  Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${sha256(bytes)}\nsize ${bytes.length}\n`);

const whoami = await hub.whoAmI({ hubUrl, accessToken: ownerToken }).catch((e) => e);
await check("whoAmI returns the owner with a write token", () => {
  expect(!(whoami instanceof Error), `whoAmI failed: ${whoami}`);
  equal(whoami.type, "user", "type");
  equal(whoami.auth?.accessToken?.role, "write", "auth.accessToken.role");
  return whoami.name;
});
const user = whoami.name;
const repo = `${user}/fidelity-${randomBytes(4).toString("hex")}`;

await check("createRepo creates a private repo", async () => {
  const created = await hub.createRepo({ ...owner, repo, private: true });
  equal(created.repoUrl, `${hubUrl}/${repo}`, "repoUrl");
  expect(typeof created.id === "string" && created.id.length > 0, "id missing");
});

await check("createRepo again fails with 409", async () => {
  try {
    await hub.createRepo({ ...owner, repo, visibility: "private" });
  } catch (error) {
    equal(error.statusCode, 409, "statusCode");
    expect(/already created/.test(error.message), `message: ${error.message}`);
    return;
  }
  throw new Error("second createRepo succeeded");
});

await check("repoExists: true for the owner, false for others and for a missing repo", async () => {
  equal(await hub.repoExists({ ...owner, repo }), true, "owner");
  equal(await hub.repoExists({ ...other, repo }), false, "other user's read token");
  equal(await hub.repoExists({ hubUrl, repo }), false, "anonymous");
  equal(await hub.repoExists({ ...owner, repo: `${user}/does-not-exist` }), false, "missing repo");
});

const files = new Map([
  ["regular.txt", Buffer.from("a small regular file, stored in git\n")],
  ["lfs.dat", randomBytes(3000)], // > lfs threshold, < chunk size: basic LFS PUT
  ["multipart.dat", randomBytes(12345)], // 3 parts of 5000 bytes at most
  ["dir/a.txt", Buffer.from("nested a\n")],
  ["dir/sub/b.txt", Buffer.from("nested b\n")],
  ["dir/with space.txt", Buffer.from("a path with a space\n")],
  ["empty.txt", Buffer.alloc(0)], // the client asks bytes=0-0 even of empty files
]);
const lfsFiles = new Set(["lfs.dat", "multipart.dat"]);

let uploadCommit;
await check("uploadFiles: regular + basic LFS + multipart LFS in one commit", async () => {
  const mark = requests.length;
  const result = await hub.uploadFiles({
    ...owner,
    repo,
    commitTitle: "Upload fidelity files",
    files: [...files].map(([path, bytes]) => ({ path, content: new Blob([bytes]) })),
  });
  uploadCommit = result?.commit?.oid;
  expect(/^[0-9a-f]{40}$/.test(uploadCommit ?? ""), `commit oid: ${uploadCommit}`);
  const put = (re) => requestsSince(mark, (r) => r.method === "PUT" && re.test(r.path) && r.status === 200).length;
  equal(put(/^\/_lfs\/upload\//), 1, "basic LFS PUTs");
  equal(put(/^\/_lfs\/multipart\/[0-9a-f]+\/\d+$/), 3, "multipart part PUTs");
  equal(
    requestsSince(mark, (r) => r.method === "POST" && /\/complete$/.test(r.path) && r.status === 200).length,
    1,
    "multipart completions"
  );
  equal(requestsSince(mark, (r) => /\/info\/lfs\/objects\/batch$/.test(r.path)).length, 1, "LFS batch calls");
  equal(requestsSince(mark, (r) => /\/commit\/main$/.test(r.path) && r.status === 200).length, 1, "commits");
  return uploadCommit;
});

await check("listFiles (recursive, paginated) lists every path with size, oid and lfs", async () => {
  const mark = requests.length;
  const listed = new Map();
  for await (const entry of hub.listFiles({ ...owner, repo, recursive: true })) listed.set(entry.path, entry);
  const pages = requestsSince(mark, (r) => /\/tree\/main$/.test(r.path)).length;
  expect(pages >= 3, `expected >= 3 pages of 3 entries, got ${pages}`);
  for (const dir of ["dir", "dir/sub"]) equal(listed.get(dir)?.type, "directory", `${dir} type`);
  expect(listed.has(".gitattributes"), ".gitattributes missing");
  for (const [path, bytes] of files) {
    const entry = listed.get(path);
    expect(entry, `${path} not listed`);
    equal(entry.type, "file", `${path} type`);
    equal(entry.size, bytes.length, `${path} size`);
    if (lfsFiles.has(path)) {
      equal(entry.lfs?.oid, sha256(bytes), `${path} lfs.oid`);
      equal(entry.lfs?.size, bytes.length, `${path} lfs.size`);
      equal(entry.lfs?.pointerSize, lfsPointer(bytes).length, `${path} lfs.pointerSize`);
      equal(entry.oid, gitBlobSha1(lfsPointer(bytes)), `${path} oid (pointer blob)`);
    } else {
      equal(entry.lfs, undefined, `${path} lfs`);
      equal(entry.oid, gitBlobSha1(bytes), `${path} oid (git blob sha1)`);
    }
  }
  equal(listed.size, files.size + 3, "entry count (files + 2 dirs + .gitattributes)");
  return `${listed.size} entries in ${pages} pages`;
});

await check("listFiles of a sub-path (non-recursive)", async () => {
  const names = [];
  for await (const entry of hub.listFiles({ ...owner, repo, path: "dir" })) names.push(entry.path);
  equal(JSON.stringify(names.sort()), JSON.stringify(["dir/a.txt", "dir/sub", "dir/with space.txt"]), "entries");
});

await check("downloadFile returns the exact bytes of every file (LFS through the 302)", async () => {
  const mark = requests.length;
  for (const [path, bytes] of files) {
    const blob = await hub.downloadFile({ ...owner, repo, path });
    expect(blob, `${path}: null`);
    const got = Buffer.from(await blob.arrayBuffer());
    expect(got.equals(bytes), `${path}: ${got.length} bytes differ from the ${bytes.length} uploaded`);
  }
  // LFS files: the client follows the 302, then fetches the byte route itself.
  equal(requestsSince(mark, (r) => r.path.startsWith("/_lfs/cdn/") && r.status === 200).length, 2, "byte-route GETs");
});

await check("downloadFile of a missing path returns null (404 EntryNotFound)", async () => {
  equal(await hub.downloadFile({ ...owner, repo, path: "missing.txt" }), null, "result");
  const response = await fetch(`${hubUrl}/${repo}/resolve/main/missing.txt`, {
    headers: { Authorization: `Bearer ${ownerToken}` },
  });
  equal(response.status, 404, "status");
  equal(response.headers.get("x-error-code"), "EntryNotFound", "X-Error-Code");
  equal(response.headers.get("x-repo-commit"), uploadCommit, "X-Repo-Commit");
});

await check("fileExists: true for a file, false for a missing one", async () => {
  equal(await hub.fileExists({ ...owner, repo, path: "lfs.dat" }), true, "lfs.dat");
  equal(await hub.fileExists({ ...owner, repo, path: "nope.dat" }), false, "nope.dat");
});

await check("pathsInfo with expand returns existing paths and their last commit", async () => {
  const infos = await hub.pathsInfo({ ...owner, repo, paths: ["regular.txt", "lfs.dat", "dir", "absent.txt"], expand: true });
  const byPath = new Map(infos.map((info) => [info.path, info]));
  equal(byPath.size, 3, "entries");
  equal(byPath.get("lfs.dat")?.lfs?.oid, sha256(files.get("lfs.dat")), "lfs.dat lfs.oid");
  equal(byPath.get("regular.txt")?.size, files.get("regular.txt").length, "regular.txt size");
  equal(byPath.get("dir")?.type, "directory", "dir type");
  equal(byPath.get("regular.txt")?.lastCommit?.id, uploadCommit, "lastCommit.id");
});

await check("modelInfo (revision HEAD) describes the private repo", async () => {
  const info = await hub.modelInfo({ ...owner, name: repo });
  equal(info.name, repo, "name");
  equal(info.private, true, "private");
  expect(typeof info.id === "string" && info.id.length > 0, "id missing");
});

await check("another user's read token cannot read the private repo", async () => {
  let failed = 0;
  for (const attempt of [
    () => hub.downloadFile({ ...other, repo, path: "regular.txt" }),
    async () => {
      for await (const entry of hub.listFiles({ ...other, repo })) void entry;
    },
    () => hub.modelInfo({ ...other, name: repo }),
  ]) {
    try {
      const result = await attempt();
      expect(result === null || result === undefined, "got data");
      if (result === null) failed++;
    } catch (error) {
      expect([401, 404].includes(error.statusCode), `status ${error.statusCode}: ${error.message}`);
      failed++;
    }
  }
  equal(failed, 3, "refused attempts");
});

await check("deleteFile removes a file in a new commit", async () => {
  const result = await hub.deleteFile({ ...owner, repo, path: "regular.txt" });
  expect(result?.commit?.oid && result.commit.oid !== uploadCommit, "no new commit");
  const paths = [];
  for await (const entry of hub.listFiles({ ...owner, repo, recursive: true })) paths.push(entry.path);
  expect(!paths.includes("regular.txt"), "regular.txt still listed");
  expect(paths.includes("lfs.dat"), "lfs.dat lost");
});

await check("deleteFile of a missing file fails", async () => {
  try {
    await hub.deleteFile({ ...owner, repo, path: "never-there.txt" });
  } catch (error) {
    equal(error.statusCode, 404, "statusCode");
    return;
  }
  throw new Error("deleting a missing file succeeded");
});

await check("a read token cannot write", async () => {
  try {
    await hub.uploadFiles({ ...other, repo: `${user}/read-only-${randomBytes(3).toString("hex")}`, files: [{ path: "x.txt", content: new Blob(["x"]) }] });
  } catch (error) {
    expect([401, 403, 404].includes(error.statusCode), `status ${error.statusCode}`);
    return;
  }
  throw new Error("upload with a read token succeeded");
});

await check("deleteRepo removes the repo", async () => {
  await hub.deleteRepo({ ...owner, repo });
  equal(await hub.repoExists({ ...owner, repo }), false, "exists after delete");
});

console.log(failures === 0 ? "PASS all fidelity checks" : `FAILED ${failures} fidelity check(s)`);
process.exit(failures === 0 ? 0 : 1);
