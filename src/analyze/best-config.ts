import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { modelConfigFromJson, modelConfigToProtoJson } from '../config/model-config-json.js';
import { modelConfigToText } from '../config/model-config-text.js';
import { parseModelConfig } from '../config/parse-model-config.js';
import { bestOf, summarize } from './analyze-report.js';
import { type ConfigJson, applyRunConfig } from './run-config.js';
import type { AnalyzeResult } from './run-analyze.js';

/**
 * The best configuration as config.pbtxt text: the model's own config.pbtxt when the repository is
 * known (the served configuration otherwise, auto-completed fields and all) with the best run config's
 * settings. NOTE: written from the parsed configuration, so the file's comments and layout are not
 * kept; the first line says where it came from. Undefined when no configuration met the criteria.
 */
export async function bestConfigText(result: AnalyzeResult, modelRepository: string | undefined): Promise<string | undefined> {
  const best = bestOf(result);
  if (best === undefined) return undefined;
  let source: ConfigJson = result.servedConfig;
  if (modelRepository !== undefined) {
    const path = join(modelRepository, result.modelName, 'config.pbtxt');
    const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (text !== undefined) source = modelConfigToProtoJson(parseModelConfig(text, path));
  }
  const config = modelConfigFromJson(JSON.stringify(applyRunConfig(source, best.runConfig)), 'the best configuration');
  return `# Written by nereid analyze on ${result.startedAt.slice(0, 10)}: ${summarize(result)}\n${modelConfigToText(config)}`;
}

/**
 * Writes `text` as the model's config.pbtxt, first copying the old file (when there is one) to
 * `config.pbtxt.<time>.bak`; resolves with the backup's path, or undefined when there was no file.
 */
export async function applyBestConfig(modelRepository: string, modelName: string, text: string): Promise<string | undefined> {
  const path = join(modelRepository, modelName, 'config.pbtxt');
  const backup = `${path}.${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}.bak`;
  let hasBackup = true;
  await copyFile(path, backup).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
    hasBackup = false;
  });
  await writeFile(path, text);
  return hasBackup ? backup : undefined;
}
