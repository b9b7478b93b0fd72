import type { ExecuteResult, ModelInstance } from '../kernel/model-instance.js';
import type { InferRequest } from '../kernel/infer-request.js';
import { type Clock, systemClock } from './clock.js';
import type { RateLimiterRegistration } from './rate-limiter.js';

/** One execution an instance may run on the resources the rate limiter has allocated to it. */
export interface AdmittedExecution {
  readonly name: string;
  /** Runs the batch, then gives the resources back. Call it, or `withdraw`, once. */
  execute(requests: readonly InferRequest[]): Promise<ExecuteResult>;
  /** Gives the resources back unused. */
  withdraw(): void;
}

/**
 * An instance that asks the rate limiter for its resources before each execution and gives them back
 * after it. `execute` reports the wait as `waitNs`, which the statistics count as queue time: in
 * Triton too a request waits for the rate limiter before its compute starts.
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
    const admitted = await this.admit();
    const waitNs = (this.#clock.nowUs() - startUs) * 1000;
    return { ...(await admitted.execute(requests)), waitNs };
  }

  /**
   * Asks for the instance's resources and resolves once they are allocated to it; rejects once the
   * instance is unregistered. For a scheduler that picks the batch only then (the dynamic batcher: in
   * Triton its payload keeps growing while it waits in the rate limiter).
   */
  async admit(): Promise<AdmittedExecution> {
    await this.#registration.acquire();
    return {
      name: this.name,
      execute: async (requests) => {
        try {
          return await this.#instance.execute(requests);
        } finally {
          this.#registration.release();
        }
      },
      withdraw: () => this.#registration.giveBack(),
    };
  }

  async close(): Promise<void> {
    this.#registration.unregister();
    await this.#instance.close();
  }
}
