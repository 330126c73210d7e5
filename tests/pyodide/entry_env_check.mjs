// Real Pyodide (npm `pyodide`, Python 3.14) reads a real JS object the way the Workers runtime
// hands `env` to Python: adapters/cloudflare/env.py turns it into settings and a presence-only report.
// Prints one JSON object per case on stdout. Run by entry_env_test.py.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadPyodide } from "pyodide";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
// What the env helpers need at import: the package root, core and their own module.
const SHIPPED = ["src/memvault/__init__.py", "src/memvault/core", "src/memvault/adapters/__init__.py", "src/memvault/adapters/cloudflare/__init__.py", "src/memvault/adapters/cloudflare/env.py"];

function copyInto(pyodide, path) {
  const full = join(ROOT, path);
  if (statSync(full).isDirectory()) {
    for (const name of readdirSync(full)) if (name !== "__pycache__") copyInto(pyodide, join(path, name));
    return;
  }
  if (!path.endsWith(".py")) return;
  const target = `/repo/${path}`;
  pyodide.FS.mkdirTree(target.slice(0, target.lastIndexOf("/")));
  pyodide.FS.writeFile(target, readFileSync(full));
}

const pyodide = await loadPyodide();
for (const path of SHIPPED) copyInto(pyodide, path);
const bound = { DB: {}, VAULT: {}, VECTORIZE: {}, BODIES: {}, AI: {}, CACHE: {} };
globalThis.cases = {
  complete: { ...bound, MEMVAULT_BRAIN_CREDENTIALS: "value-that-must-not-leak", MEMVAULT_SEARCH_LIMIT: "7" },
  nullBinding: { ...bound, CACHE: null, MEMVAULT_BRAIN_CREDENTIALS: "x" },
  undefinedValues: { ...bound, MEMVAULT_BRAIN_CREDENTIALS: undefined, MEMVAULT_SEARCH_LIMIT: undefined, MEMVAULT_HOT_WINDOW_HOURS: undefined },
  emptySecretNoCron: { ...bound, MEMVAULT_BRAIN_CREDENTIALS: "" },
  retired: { ...bound, MEMVAULT_BRAIN_CREDENTIALS: "x", MEMVAULT_CRON_SCHEDULES: "17 3 * * *", MEMVAULT_CHUNK_TOKENS: null, MEMVAULT_RECENCY_WEIGHT: "0.5" },
};
const report = await pyodide.runPythonAsync(`
import json, sys
sys.path.insert(0, "/repo/src")
import js
from memvault.core.operations.health import HealthReport
from memvault.adapters.cloudflare.env import env_settings, env_value, platform_report

results = {}
# The bundle's crons, as scripts/build_worker.py writes them; the last case's bundle has none.
for name in ["complete", "nullBinding", "undefinedValues", "emptySecretNoCron", "retired"]:
    env = getattr(js.cases, name)
    settings = env_settings(env)
    crons = () if name == "emptySecretNoCron" else ("17 3 * * *",)
    health = HealthReport(version="test", platform=platform_report(env, settings, crons))
    results[name] = {"status": health.http_status, "body": health.to_dict(), "search_limit": settings.search_limit,
                     "unbound": env_value(env, "NOT_BOUND")}
json.dumps({"python": sys.version.split()[0], "results": results})
`);
console.log(report);
