import { env } from "cloudflare:workers";

if (!env.MEMVAULT_URL || !env.MEMVAULT_KEY) {
  throw new Error("MEMVAULT_URL and MEMVAULT_KEY name the memvault these tests use: run them through " +
    "tests/typescript/test_typescript_client.py (scripts/test does), which starts one");
}
