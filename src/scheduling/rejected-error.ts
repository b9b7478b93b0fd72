import { NereidError } from '../core/errors.js';

/**
 * A request a scheduler turned away without running it: its queue was full, its timeout passed, or
 * the model was unloading. UNAVAILABLE, as Triton answers these; metrics count it as reason REJECTED.
 */
export class RejectedError extends NereidError {
  constructor(message: string) {
    super('UNAVAILABLE', message);
  }
}
