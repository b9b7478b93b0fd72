import type { FuzzTarget } from '../fuzz-target.js';
import { binaryDataTargets } from './binary-data.js';
import { bytesTensorTargets } from './bytes-tensor.js';
import { grpcCodecTargets } from './grpc-codec.js';
import { kserveJsonTargets } from './kserve-json.js';
import { modelConfigTargets } from './model-config.js';
import { pythonFrameTargets } from './python-frames.js';
import { contentEncodingTargets, requestFieldTargets } from './request-fields.js';

/** The fuzz targets that run in this process, parser by parser. */
export const IN_PROCESS_TARGETS: readonly FuzzTarget[] = [
  ...kserveJsonTargets,
  ...binaryDataTargets,
  ...grpcCodecTargets,
  ...bytesTensorTargets,
  ...modelConfigTargets,
  ...pythonFrameTargets,
  ...requestFieldTargets,
  ...contentEncodingTargets,
];
