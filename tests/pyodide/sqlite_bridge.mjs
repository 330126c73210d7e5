// A synchronous line to SQLite for the Durable Object SQL stand-in. ctx.storage.sql.exec is
// synchronous, Pyodide calls it synchronously, and Node 20 has no built-in SQLite, so the
// statements go to a CPython process (sqlite_host.py) through a worker thread while this thread
// blocks on Atomics.wait.
import { Worker } from "node:worker_threads";
import { fileURLToPath } from "node:url";

const CAPACITY = 32 * 1024 * 1024;
const TIMEOUT_MS = 30_000;
const HOST_SCRIPT = fileURLToPath(new URL("./sqlite_host.py", import.meta.url));

const WORKER_SOURCE = `
const { workerData, parentPort } = require("node:worker_threads");
const { spawn } = require("node:child_process");
const readline = require("node:readline");
const { shared, python, script } = workerData;
const flag = new Int32Array(shared, 0, 2);
const bytes = new Uint8Array(shared, 8);
const child = spawn(python, [script], { stdio: ["pipe", "pipe", "inherit"] });
const answer = (text) => {
  const encoded = new TextEncoder().encode(text);
  if (encoded.length > bytes.length) {
    return answer(JSON.stringify({ error: "answer larger than the bridge buffer" }));
  }
  // An answer the caller has not read yet (a late one it gave up on) is never overwritten mid-read.
  while (Atomics.load(flag, 0) === 1) Atomics.wait(flag, 0, 1, 1000);
  bytes.set(encoded);
  Atomics.store(flag, 1, encoded.length);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
};
child.on("error", (err) => answer(JSON.stringify({ error: "cannot start " + python + ": " + err.message })));
child.on("exit", (code) => answer(JSON.stringify({ error: "sqlite host exited with " + code })));
readline.createInterface({ input: child.stdout }).on("line", answer);
parentPort.on("message", (request) => child.stdin.write(JSON.stringify(request) + "\\n"));
parentPort.on("close", () => child.kill());
`;

export function startSqliteHost(python) {
  const shared = new SharedArrayBuffer(8 + CAPACITY);
  const flag = new Int32Array(shared, 0, 2);
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { shared, python, script: HOST_SCRIPT } });
  const decoder = new TextDecoder();
  let sent = 0;
  return {
    // Each request carries a sequence number the host echoes: after a call timed out, its late
    // answer is read and dropped instead of being taken for the next call's.
    call(request) {
      const seq = ++sent;
      const deadline = Date.now() + TIMEOUT_MS;
      worker.postMessage({ ...request, seq });
      for (;;) {
        const left = deadline - Date.now();
        if (left <= 0 || Atomics.wait(flag, 0, 0, left) === "timed-out") {
          throw new Error(`sqlite host gave no answer in ${TIMEOUT_MS} ms`);
        }
        const text = decoder.decode(new Uint8Array(shared, 8, Atomics.load(flag, 1)).slice());
        Atomics.store(flag, 0, 0);
        Atomics.notify(flag, 0);
        const answer = JSON.parse(text);
        if (answer.seq != null && answer.seq !== seq) continue;
        if (answer.error) throw new Error(answer.error);
        return answer;
      }
    },
    close: () => worker.terminate(),
  };
}

function encodeParam(value) {
  if (value === null) return null;
  if (value === undefined) throw new TypeError("SQL bindings cannot be undefined");
  // JSON has no infinities or NaN; the host turns these back into floats.
  if (typeof value === "number") return Number.isFinite(value) ? value : { $float: String(value) };
  if (typeof value === "string") return value;
  if (value instanceof ArrayBuffer) return { $blob: Buffer.from(value).toString("base64") };
  if (ArrayBuffer.isView(value)) {
    return { $blob: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") };
  }
  throw new TypeError(`unsupported SQL binding of type ${typeof value}`);
}

function decodeValue(value) {
  if (value !== null && typeof value === "object" && "$blob" in value) {
    const buffer = Buffer.from(value.$blob, "base64");
    return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength);
  }
  if (value !== null && typeof value === "object" && "$float" in value) return Number(value.$float);
  return value;
}

// The shape of workerd's SqlStorageCursor: an iterator of row objects with toArray(), one(),
// raw(), columnNames, rowsRead and rowsWritten.
class Cursor {
  #rows;
  #index = 0;
  #written;
  constructor({ columns, rows, rowsWritten }) {
    this.columnNames = columns;
    this.#rows = rows.map((row) => row.map(decodeValue));
    this.#written = rowsWritten;
  }
  get rowsRead() {
    return this.#index;
  }
  get rowsWritten() {
    return this.#written;
  }
  #nextRaw() {
    return this.#index < this.#rows.length ? this.#rows[this.#index++] : undefined;
  }
  next() {
    const row = this.#nextRaw();
    if (row === undefined) return { done: true, value: undefined };
    return { done: false, value: Object.fromEntries(this.columnNames.map((name, i) => [name, row[i]])) };
  }
  [Symbol.iterator]() {
    return this;
  }
  toArray() {
    return [...this];
  }
  one() {
    const rows = this.toArray();
    if (rows.length === 0) throw new Error("Expected exactly one result from SQL query, but got no results.");
    if (rows.length > 1) throw new Error("Expected exactly one result from SQL query, but got multiple results.");
    return rows[0];
  }
  *raw() {
    for (let row = this.#nextRaw(); row !== undefined; row = this.#nextRaw()) yield row;
  }
}

// A fresh, empty stand-in for a Durable Object's ctx.storage (SQL part only).
export function durableObjectStorage(host) {
  const { db } = host.call({ op: "open" });
  return {
    sql: {
      exec(sql, ...params) {
        return new Cursor(host.call({ op: "exec", db, sql, params: params.map(encodeParam) }));
      },
    },
    transactionSync(closure) {
      host.call({ op: "begin", db });
      let result;
      try {
        result = closure();
      } catch (error) {
        host.call({ op: "rollback", db });
        throw error;
      }
      host.call({ op: "commit", db });
      return result;
    },
  };
}
