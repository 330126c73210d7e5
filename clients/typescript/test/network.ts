import type { Fetch } from "../src/index.js";

/** The fetch a transport is given: the real network to memvault, unless it is down (every request
 * fails as an unreachable host does), slow, loses answers after memvault acted, or something in
 * between answers 400 itself before memvault saw the request. It counts what was sent. */
export class Network {
  down = false;
  delaySeconds = 0;
  loseAnswers = 0;
  garble = 0;
  readonly sent: string[] = [];

  readonly fetch: Fetch = async (input, init) => {
    this.sent.push(`${init.method ?? "GET"} ${new URL(input).pathname}`);
    if (this.delaySeconds > 0) {
      await new Promise((resolve) => setTimeout(resolve, this.delaySeconds * 1000));
    }
    if (this.down) {
      throw new TypeError("Network connection lost.");
    }
    if (this.garble > 0) {
      this.garble -= 1;
      return new Response("Invalid HTTP request received.", { status: 400 });
    }
    const response = await fetch(input, init);
    if (this.loseAnswers > 0) {
      this.loseAnswers -= 1;
      await response.body?.cancel();
      throw new TypeError("Network connection lost.");
    }
    return response;
  };
}
