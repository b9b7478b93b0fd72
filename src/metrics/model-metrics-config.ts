import type { Logger } from '../logging/logger.js';
import type { ModelConfig } from '../protocol/gen/model_config_pb.js';

/** The one metric family whose options a model's `model_metrics` may set, as in Triton's core. */
export const FIRST_RESPONSE_FAMILY = 'nv_inference_first_response_histogram_ms';

/**
 * The first-response histogram's buckets from a config's `model_metrics`, or undefined when it sets
 * none (Triton's MetricReporterConfig::ParseConfig, core src/metric_model_reporter.cc): each
 * metric_control naming that family sets them, the last one winning; one naming another family is
 * left out with Triton's warning. validate.ts has checked that each names a family and gives buckets.
 */
export function firstResponseBucketsOf(config: ModelConfig, logger: Logger): readonly number[] | undefined {
  let buckets: readonly number[] | undefined;
  for (const control of config.modelMetrics?.metricControl ?? []) {
    const family = control.metricIdentifier?.family ?? '';
    if (family !== FIRST_RESPONSE_FAMILY) {
      logger.warning('metrics', `Metric family '${family}' in 'metric_identifier' is not a customizable metric in Triton core.`);
      continue;
    }
    if (control.metricOptions.case === 'histogramOptions') buckets = control.metricOptions.value.buckets;
  }
  return buckets;
}
