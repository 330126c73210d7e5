// memvault behind a slow network, for the TypeScript bot's measurements: each call of the client
// interface waits DELAY_SECONDS, then goes on to memvault's Worker over the service binding whose
// props name the memory key, and its answer (or error) comes back as it is.
import { WorkerEntrypoint } from "cloudflare:workers";

export default class SlowLink extends WorkerEntrypoint {
  async slowly(method, args) {
    await new Promise((resolve) => setTimeout(resolve, Number(this.env.DELAY_SECONDS) * 1000));
    return this.env.MEMVAULT[method](...args);
  }

  getMemory(...args) { return this.slowly("getMemory", args); }
  saveMemory(...args) { return this.slowly("saveMemory", args); }
  searchMemory(...args) { return this.slowly("searchMemory", args); }
  forgetMemory(...args) { return this.slowly("forgetMemory", args); }
}
