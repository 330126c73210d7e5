// The Pyodide fidelity tier: real Pyodide (npm `pyodide`, Python 3.14, as production runs for
// wrangler.toml's compatibility date) runs the Worker bundle scripts/build_worker.py stages, on the
// real Python Workers SDK (workers-runtime-sdk) with FastAPI and pydantic, against miniflare's real
// D1 (migrations applied), R2 and KV, plus stand-ins for what has no local simulation (Durable
// Object SQL, Workers AI, Vectorize, the Vault DO stub, a service binding to the Worker entry), and
// runs every contract suite's checks and the memory client's. It first times the import of the
// Worker entry in the fresh interpreter. Prints one JSON report on stdout.
//
//   node tests/pyodide/harness.mjs [--out FILE] [--only SUITE,SUITE]
//
// MEMVAULT_HOST_PYTHON names the CPython that backs the DO SQL stand-in and stages the bundle
// (default: python3); MEMVAULT_PYODIDE_WHEELS the folder of wheels to load (default: .venv/pyodide-wheels).
import { execFileSync } from "node:child_process";
import { generateKeyPairSync, sign } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { loadPyodide } from "pyodide";
import { loadWheels, registerRuntimeModules, runtimeShaped } from "./runtime_modules.mjs";
import { splitSql } from "./split_sql.mjs";
import { durableObjectStorage, startSqliteHost } from "./sqlite_bridge.mjs";
import { vectorize, workersAi } from "./standins.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..", "..");
const started = performance.now();
const seconds = (from) => Math.round((performance.now() - from) / 10) / 100;

const HOST_PYTHON = process.env.MEMVAULT_HOST_PYTHON || "python3";
const WHEELS = process.env.MEMVAULT_PYODIDE_WHEELS || join(ROOT, ".venv", "pyodide-wheels");
// The checks and the contract suites they run, beside the staged bundle.
const TEST_FILES = [
  "tests/contract/suites",
  "tests/pyodide/runner.py",
  "tests/pyodide/cloudflare_checks.py",
  "tests/pyodide/cloudflare_runtime_checks.py",
  "tests/pyodide/client_checks.py",
  "tests/pyodide/runtime_stand_ins",
  "tests/pyodide/limits_checks.py",
  "tests/backup_round_trip.py",
];

// The bundle as wrangler uploads it (entry.py, memvault/, durable_objects/, migrations/), staged by
// the same script wrangler's [build] runs, copied to /bundle: the module root production has.
function copyBundle(pyodide) {
  const staged = mkdtempSync(join(tmpdir(), "memvault-bundle-"));
  try {
    execFileSync(HOST_PYTHON, [join(ROOT, "scripts", "build_worker.py"), "--out", staged], { stdio: "ignore" });
    const copy = (dir, target) => {
      pyodide.FS.mkdirTree(target);
      for (const name of readdirSync(dir)) {
        const full = join(dir, name);
        if (statSync(full).isDirectory()) copy(full, `${target}/${name}`);
        else pyodide.FS.writeFile(`${target}/${name}`, readFileSync(full));
      }
    };
    copy(staged, "/bundle");
  } finally {
    rmSync(staged, { recursive: true, force: true });
  }
}

// Importing the entry in the fresh interpreter, as the runtime does while it takes the deploy-time
// snapshot: how long it takes, and which heavy modules it brought in.
// The SDK's package patches load first, as the runtime loads them at startup (the SDK's .pth file,
// when the runtime's _cloudflare package is there); its entropy patches concern the snapshot, which
// this tier does not take.
const IMPORT_ENTRY = `
import json, sys, time
import _workers_sdk_package_patches
started = time.perf_counter()
import entry
json.dumps({"seconds": round(time.perf_counter() - started, 3),
            "loaded": sorted(m for m in ("fastapi", "pydantic", "pydantic_core", "starlette", "workers", "workers.asgi",
                                         "memvault.api.app", "durable_objects.vault") if m in sys.modules)})
`;

function pythonFiles(path) {
  const full = join(ROOT, path);
  if (statSync(full).isFile()) return [path];
  return readdirSync(full)
    .filter((name) => name !== "__pycache__")
    .flatMap((name) => {
      const child = join(path, name);
      return statSync(join(ROOT, child)).isDirectory() ? pythonFiles(child) : child.endsWith(".py") ? [child] : [];
    });
}

async function applyMigrations(db) {
  // The same bookkeeping table wrangler keeps, so an applied list reads the same as in production.
  await db.exec(
    "CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)",
  );
  const dir = join(ROOT, "migrations");
  const names = readdirSync(dir).filter((n) => /^\d{4}_.*\.sql$/.test(n)).sort();
  for (const name of names) {
    const statements = splitSql(readFileSync(join(dir, name), "utf8"));
    // One batch per migration: D1 runs it as a single transaction, as wrangler does.
    await db.batch([
      ...statements.map((sql) => db.prepare(sql)),
      db.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(name),
    ]);
  }
  return names;
}

// Every database check gets a database of its own, freshly migrated, as the local runners get a
// new file: a pool of D1 bindings, migrated on first use.
const D1_POOL = 48;
const D1_SETUP_ATTEMPTS = 3;
const D1_NAMES = Array.from({ length: D1_POOL }, (_, i) => `DB${i}`);

function d1Pool(mf) {
  let next = 1;
  const prepare = async (name) => {
    const db = await mf.getD1Database(name);
    await applyMigrations(db);
    return db;
  };
  // The next database is migrated while the current check runs. A failure shows when it is
  // awaited; the no-op catch only keeps an unused last one from ending Node at shutdown.
  const prefetch = (name) => {
    const promise = prepare(name);
    promise.catch(() => {});
    return promise;
  };
  let ready = prefetch(D1_NAMES[next]);
  const advance = () => {
    next += 1;
    ready = next < D1_POOL ? prefetch(D1_NAMES[next]) : null;
  };
  return async () => {
    // On a loaded machine miniflare has failed to set up a database now and then ("fetch failed",
    // an answer matched to another request). Such a database is left unused and the next one set
    // up, a few times at most, so one lost setup fails no check, and never every check after it.
    for (let attempt = 1; ; attempt += 1) {
      if (next >= D1_POOL) throw new Error(`all ${D1_POOL} D1 databases are used: raise D1_POOL in harness.mjs`);
      try {
        const db = await ready;
        advance();
        return db;
      } catch (error) {
        advance();
        if (attempt >= D1_SETUP_ATTEMPTS) throw error;
      }
    }
  };
}

async function emptyBucket(bucket) {
  for (let listed = await bucket.list(); ; listed = await bucket.list({ cursor: listed.cursor })) {
    if (listed.objects.length) await bucket.delete(listed.objects.map((o) => o.key));
    if (!listed.truncated) break;
  }
}

async function emptyNamespace(kv) {
  for (let listed = await kv.list(); ; listed = await kv.list({ cursor: listed.cursor })) {
    await Promise.all(listed.keys.map((k) => kv.delete(k.name)));
    if (listed.list_complete) break;
  }
}

// A Cloudflare Access team for the sign-in check: Node's own crypto makes the key and signs the
// tokens, so the pure-Python RS256 verifier is checked against an independent implementation.
const ACCESS_KEY = generateKeyPairSync("rsa", { modulusLength: 2048 });
const ACCESS_KEY_SET = JSON.stringify({
  keys: [{ ...ACCESS_KEY.publicKey.export({ format: "jwk" }), kid: "pyodide-key", alg: "RS256", use: "sig" }],
});

function accessToken(claimsJson) {
  const part = (text) => Buffer.from(text).toString("base64url");
  const signed = `${part(JSON.stringify({ alg: "RS256", kid: "pyodide-key", typ: "JWT" }))}.${part(claimsJson)}`;
  return `${signed}.${sign("sha256", Buffer.from(signed), ACCESS_KEY.privateKey).toString("base64url")}`;
}

// A local upstream for the fetch-based HTTP client. /stream sends its first event, then holds the
// rest until /release is called: a client that got the first event before asking for the release
// read the body as it streamed, not after it ended. /cdn-cgi/access/certs is the Access key set.
function startUpstream() {
  const held = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (req.url === "/stream") {
        res.writeHead(200, { "content-type": "text/event-stream", "x-upstream": "yes" });
        res.write("data: part 0\n\n");
        held.push(res);
        return;
      }
      if (req.url === "/cdn-cgi/access/certs") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(ACCESS_KEY_SET);
        return;
      }
      if (req.url === "/release") {
        for (const stream of held.splice(0)) stream.end("data: part 1\n\ndata: part 2\n\n");
        res.end("released");
        return;
      }
      res.writeHead(req.url === "/missing" ? 404 : 200, { "content-type": "application/json", "x-upstream": "yes" });
      res.end(JSON.stringify({ method: req.method, echo: body.toString("utf8"), auth: req.headers.authorization ?? null }));
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

// An RPC stub: each method call reaches `call(method, args)`, with structuredClone on the way in
// and out, as the RPC boundary does.
function rpcStub(call) {
  return new Proxy(
    {},
    {
      get: (_, method) =>
        typeof method === "string" && method !== "then"
          ? async (...args) => {
              let result;
              try {
                result = await call(method, structuredClone(args));
              } catch (error) {
                // RPC hands the caller a plain Error with the thrower's message.
                throw new Error(String(error?.message ?? error));
              }
              return structuredClone(result);
            }
          : undefined,
    },
  );
}

// The Vault DO namespace: stubs whose RPC methods reach a handler the Python runner installs.
function vaultNamespace(registry) {
  return {
    idFromName: (name) => ({ name, toString: () => name }),
    get: (id) => rpcStub((method, args) => registry.handler(id.name, method, args)),
  };
}

async function main() {
  const out = process.argv.includes("--out") ? process.argv[process.argv.indexOf("--out") + 1] : null;
  const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1].split(",") : null;
  const timing = {};
  let mark = performance.now();
  const mf = new Miniflare({
    modules: true,
    script: "export default { fetch() { return new Response('memvault pyodide tier'); } }",
    d1Databases: D1_NAMES,
    r2Buckets: ["BLOBS"],
    kvNamespaces: ["CACHE"],
    cf: false,
  });
  const host = startSqliteHost(process.env.MEMVAULT_HOST_PYTHON || "python3");
  const upstream = await startUpstream();
  // Pyodide compiles its wasm while miniflare starts workerd.
  const pyodideLoading = loadPyodide().then((py) => {
    timing.pyodide_load_seconds = seconds(mark);
    return py;
  });
  try {
    await mf.ready;
    const db = await mf.getD1Database(D1_NAMES[0]);
    const blobs = await mf.getR2Bucket("BLOBS");
    const cache = await mf.getKVNamespace("CACHE");
    const migrations = await applyMigrations(db);
    timing.miniflare_seconds = seconds(mark);

    const pyodide = await pyodideLoading;
    mark = performance.now();
    const wheels = await loadWheels(pyodide, WHEELS);
    const pending = [];
    registerRuntimeModules(pyodide, { env: {}, waitUntil: (promise) => void pending.push(promise) });
    copyBundle(pyodide);
    timing.bundle_and_wheels_seconds = seconds(mark);
    for (const path of TEST_FILES.flatMap(pythonFiles)) {
      const target = `/repo/${path.split(sep).join("/")}`;
      pyodide.FS.mkdirTree(dirname(target));
      pyodide.FS.writeFile(target, readFileSync(join(ROOT, path)));
    }
    const registry = { handler: null };
    globalThis.memvaultTest = {
      env: { DB: db, BLOBS: blobs, CACHE: cache, VAULT: vaultNamespace(registry) },
      migrations,
      only,
      vaultRegistry: registry,
      upstream: `http://127.0.0.1:${upstream.address().port}`,
      // A service binding to another Worker's entrypoint; the Python check gives the handler.
      newServiceBinding: (handler) => rpcStub((method, args) => handler(method, args)),
      accessToken,
      newWorkersAi: workersAi,
      newVectorize: vectorize,
      newDurableObjectStorage: () => durableObjectStorage(host),
      runtimeShaped,
      // What the SDK's ASGI adapter handed to the runtime's waitUntil (cloudflare:workers).
      runtimeWaitUntil: pending,
      freshD1: d1Pool(mf),
      resetR2: () => emptyBucket(blobs),
      resetKV: () => emptyNamespace(cache),
      newContext() {
        const promises = [];
        return { promises, waitUntil: (p) => void promises.push(p) };
      },
    };

    pyodide.runPython("import sys; sys.path[:0] = ['/bundle', '/repo/tests/contract', '/repo/tests/pyodide', '/repo/tests/pyodide/runtime_stand_ins']");
    const entryImport = JSON.parse(pyodide.runPython(IMPORT_ENTRY));
    mark = performance.now();
    const report = JSON.parse(await pyodide.runPythonAsync("import runner\nawait runner.run_all()"));
    timing.checks_seconds = seconds(mark);
    timing.total_seconds = seconds(started);
    const text = JSON.stringify({ ...report, migrations, wheels, entry_import: entryImport, timing }, null, 1);
    if (out) writeFileSync(out, text);
    else process.stdout.write(`${text}\n`);
  } finally {
    upstream.close();
    host.close();
    await mf.dispose();
  }
}

// Exit explicitly: an idle keep-alive socket or a stray timer must not hold the run open.
main().then(
  () => process.exit(0),
  (error) => {
    console.error(error?.stack ?? String(error));
    process.exit(1);
  },
);
