/**
 * Triton's refusal of the response cache for a decoupled model or one with the sequence batcher (core
 * src/model_config_utils.cc ValidateModelConfig); an ensemble with a decoupled step is refused the same way.
 */
export function responseCacheRefusal(modelName: string, reason: 'decoupled' | 'sequence'): string {
  const what = reason === 'decoupled' ? "'decoupled' transaction policy" : 'sequence batching scheduler';
  return `Response Cache does not currently support model ${modelName} with ${what}. Please disable the response cache.`;
}
