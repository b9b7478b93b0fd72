import { toText } from '@bufbuild/protobuf/txtpb';
import { ModelConfigSchema, type ModelConfig } from '../protocol/gen/model_config_pb.js';

/** Writes a configuration as config.pbtxt text (protobuf text format), the form parseModelConfig reads. */
export function modelConfigToText(config: ModelConfig): string {
  return toText(ModelConfigSchema, config);
}
