// The Python Workers runtime around the real SDK, for the Pyodide tier: the SDK's wheel (with
// FastAPI and pydantic for Pyodide's platform) loads from the folder scripts/pyodide_wheels.py
// fills, and the two modules the runtime itself provides to the SDK get small stand-ins.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

export function wheelFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".whl"))
    .map((name) => join(dir, name));
}

export async function loadWheels(pyodide, dir) {
  const wheels = wheelFiles(dir);
  if (!wheels.some((path) => path.includes("workers_runtime_sdk-"))) {
    throw new Error(`no workers-runtime-sdk wheel in ${dir}: run .venv/bin/python scripts/pyodide_wheels.py (scripts/test does)`);
  }
  await pyodide.loadPackage(wheels, { messageCallback: () => {} });
  return wheels.map((path) => path.slice(path.lastIndexOf("/") + 1));
}

// `_cloudflare_compat_flags` (the Worker's compatibility flags, as booleans; none set here, so the
// SDK takes its defaults) and `_pyodide_entrypoint_helper` (the `cloudflare:workers` module and the
// entrypoint hooks). `patchWaitUntil` lets the real runtime take Python awaitables in
// `ctx.waitUntil`; memvault hands it JS Promises only, so the stand-in leaves ctx as it is.
export function registerRuntimeModules(pyodide, cloudflareWorkers) {
  pyodide.registerJsModule("_cloudflare_compat_flags", {});
  pyodide.registerJsModule("_pyodide_entrypoint_helper", {
    cloudflareWorkersModule: cloudflareWorkers,
    cloudflareSocketsModule: {},
    patchWaitUntil: () => {},
    doAnImport: (name) => Promise.reject(new Error(`no JS module ${name} in the Pyodide tier`)),
  });
}

// A binding as the Workers runtime hands it to Python: the SDK picks its wrapper by the JS
// constructor's name (D1Database, R2Bucket, KvNamespace, Ai, VectorizeIndexImpl, Fetcher,
// DurableObjectNamespace, DurableObjectStorage), so the stand-in carries that name and forwards
// everything else to the binding it stands for.
export function runtimeShaped(className, target) {
  const constructor = { [className]: class {} }[className];
  return new Proxy(target, {
    get(object, property) {
      if (property === "constructor") return constructor;
      const value = Reflect.get(object, property);
      return typeof value === "function" ? value.bind(object) : value;
    },
    set: (object, property, value) => Reflect.set(object, property, value),
  });
}
