import { MemvaultTimeout, isTransient } from "./errors.js";

/** How often a call is tried and how long the waits between tries grow. */
export interface Backoff {
  /** Tries in all, the first one included. */
  readonly attempts: number;
  readonly baseSeconds: number;
  readonly maxSeconds: number;
}

/** Where the client's time and chance come from: the real ones, or a test's. */
export interface Clockwork {
  now(): number;
  sleep(seconds: number): Promise<void>;
  random(): number;
}

export const REAL_TIME: Clockwork = {
  now: () => Date.now() / 1000,
  sleep: (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000)),
  random: () => Math.random(),
};

/** The wait after ``failures`` failures in a row: the exponential step, half of it fixed and half
 * random, so callers that failed together do not try again together. */
export function backoffDelay(backoff: Backoff, failures: number, random: () => number): number {
  const step = Math.min(backoff.maxSeconds, backoff.baseSeconds * 2 ** Math.max(0, failures - 1));
  return step / 2 + random() * (step / 2);
}

/** ``call()`` bounded by ``timeoutSeconds``, tried again after a growing wait while it fails in a
 * passing way, up to ``backoff.attempts`` tries; the last failure is thrown. */
export async function retrying<T>(
  call: () => Promise<T>,
  timeoutSeconds: number,
  backoff: Backoff,
  clockwork: Clockwork,
): Promise<T> {
  for (let failures = 0; ; ) {
    try {
      return await withTimeout(call(), timeoutSeconds);
    } catch (error) {
      failures += 1;
      if (failures >= backoff.attempts || !isTransient(error)) {
        throw error;
      }
      await clockwork.sleep(backoffDelay(backoff, failures, clockwork.random));
    }
  }
}

function withTimeout<T>(pending: Promise<T>, seconds: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new MemvaultTimeout(`memvault did not answer within ${seconds} s`)), seconds * 1000);
  });
  return Promise.race([pending, expired]).finally(() => {
    if (timer !== undefined) {
      clearTimeout(timer);
    }
  });
}
