import type { ExecuteResult, ModelInstance } from '../kernel/model-instance.js';
import type { InferRequest } from '../kernel/infer-request.js';
import { type Clock, systemClock } from './clock.js';
import type { RateLimiterRegistration } from './rate-limiter.js';

/**
 * An instance that asks the rate limiter for its resources before each execution and gives them back
 * after it. The wait is reported as `waitNs`, which the statistics count as queue time: in Triton too
 * a request waits for the rate limiter before its compute starts.
 */
export class RateLimitedInstance implements ModelInstance {
  readonly #instance: ModelInstance;
  readonly #registration: RateLimiterRegistration;
  readonly #clock: Clock;

  constructor(instance: ModelInstance, registration: RateLimiterRegistration, clock: Clock = systemClock) {
    this.#instance = instance;
    this.#registration = registration;
    this.#clock = clock;
  }

  get name(): string {
    return this.#instance.name;
  }

  get isHealthy(): boolean | undefined {
    return this.#instance.isHealthy;
  }

  async execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    const startUs = this.#clock.nowUs();
    await this.#registration.acquire();
    const waitNs = (this.#clock.nowUs() - startUs) * 1000;
    try {
      return { ...(await this.#instance.execute(requests)), waitNs };
    } finally {
      this.#registration.release();
    }
  }

  async close(): Promise<void> {
    this.#registration.unregister();
    await this.#instance.close();
  }
}
