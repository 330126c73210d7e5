import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// The tests reach a real memvault over HTTP: tests/typescript/test_typescript_client.py starts the
// local server with a fresh key and runs Vitest with its address and key in these variables.
const memvault = { MEMVAULT_URL: process.env["MEMVAULT_URL"] ?? "", MEMVAULT_KEY: process.env["MEMVAULT_KEY"] ?? "" };

export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: "./test/wrangler.jsonc" }, miniflare: { bindings: memvault } })],
  test: { testTimeout: 60_000, setupFiles: ["./test/setup.ts"] },
});
