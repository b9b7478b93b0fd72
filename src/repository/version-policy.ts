import type { ModelVersionPolicy } from '../protocol/gen/model_config_pb.js';

/**
 * The versions a policy serves out of those on disk (Triton's version_policy): `latest` the
 * `num_versions` highest, `all` every one, `specific` those listed that exist. Sorted ascending.
 * Also reports listed versions that have no folder, so the caller can mark them unavailable.
 */
export function selectVersions(
  policy: ModelVersionPolicy | undefined,
  available: readonly number[],
): { readonly selected: number[]; readonly missing: number[] } {
  const sorted = [...available].sort((a, b) => a - b);
  const choice = policy?.policyChoice;
  if (choice === undefined || choice.case === undefined || choice.case === 'latest') {
    const count = Math.max(1, choice?.case === 'latest' ? choice.value.numVersions : 1);
    return { selected: sorted.slice(-count), missing: [] };
  }
  if (choice.case === 'all') return { selected: sorted, missing: [] };
  const wanted = [...new Set(choice.value.versions.map((version) => Number(version)))].sort((a, b) => a - b);
  return {
    selected: wanted.filter((version) => sorted.includes(version)),
    missing: wanted.filter((version) => !sorted.includes(version)),
  };
}
