declare namespace Cloudflare {
  interface Env {
    MEMVAULT_URL: string;
    MEMVAULT_KEY: string;
    AGENT: DurableObjectNamespace<import("./agent.js").TestAgent>;
  }
}
