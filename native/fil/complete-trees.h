// The fil evaluator's kernel for shallow forests (issue 15): every tree padded to a complete binary
// tree of the forest's depth D (at most kMaxCompleteDepth), its 2^D - 1 splits in breadth-first
// order, and all of them decided for 16 rows at once, with no walk at all:
//
//   mask = all 2^D leaves                (bit l: leaf l, left to right)
//   each split p, each row:              if x[feature p] >= threshold p: mask &= ~leftLeaves[p]
//   leaf = the lowest bit left in mask
//
// A split going right rules out the leaves of its left subtree. Every leaf left of the row's leaf
// lies in the left subtree of a split on the row's path that went right, so it is ruled out; the
// row's own leaf lies in no such subtree (a split off the path rules out leaves of its own subtree
// only); so the row's leaf is the lowest bit left (QuickScorer, Lucchese et al., SIGIR 2015). The
// rows are transposed first (feature-major, 16 rows side by side), so a split is one vector load,
// compare and mask for 16 rows, and the leaf values are gathered. The kernel (complete-kernel.inc) is
// compiled three times, for AVX-512, AVX2 and the baseline's SSE2, and chosen at run time.
//
// The work per row and tree is 2^D - 1 compares against D dependent loads for a walk: about 1 ns
// against 4 a row and tree at depth 4 (docs/benchmarks.md, "Tree models"). A leaf above depth D
// becomes a subtree whose leaves all hold its value. NaN goes right when the split's default is right
// (the NaN term, only for 16 rows with a NaN among them); other split kinds (zero as missing,
// categories) keep the walk of fil.cc. The sums are the walk's: each row's leaves added in tree
// order to 0.0, bit for bit.
#ifndef NEREID_FIL_COMPLETE_TREES_H_
#define NEREID_FIL_COMPLETE_TREES_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__)
// GCC 12's intrinsics read "undefined" registers on purpose, which -Wmaybe-uninitialized reports
// wherever they are inlined (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace complete {

constexpr int kMaxCompleteDepth = 5;
constexpr int kLanes = 16;
// Transposed blocks above this many floats (kLanes rows) would not stay in cache; wider forests walk.
constexpr int32_t kMaxFeatures = 4096;

// 8 bytes: the threshold (right when x >= threshold) and feature * kLanes | defaultRight.
struct Split {
  float threshold;
  int32_t column;
};

struct Layout {
  int depth = 0;
  int32_t numFeatures = 0;
  int32_t numGroups = 0;
  std::vector<Split> splits;   // tree * (2^D - 1) + position
  std::vector<double> leaves;  // tree * 2^D + leaf
  std::vector<int32_t> treeGroup;
};

// The leaves of the left subtree of split position p (breadth-first) in a complete tree of depth D,
// as bits: what the split rules out when the row goes right.
template <int D>
constexpr std::array<uint32_t, (1 << D)> MakeLeftLeaves() {
  std::array<uint32_t, (1 << D)> masks{};
  for (int p = 0; p < (1 << D) - 1; p++) {
    int level = 0;
    while ((2 << level) - 1 <= p) level++;
    const int index = p - ((1 << level) - 1);
    const int half = 1 << (D - level - 1);
    masks[p] = static_cast<uint32_t>(((uint64_t{1} << half) - 1) << (2 * index * half));
  }
  return masks;
}
template <int D>
constexpr std::array<uint32_t, (1 << D)> kLeftLeaves = MakeLeftLeaves<D>();

using SumFunction = void (*)(const Layout&, const float*, int64_t, int64_t, double*);

namespace baseline {
#define NEREID_FIL_WIDTH 4
#include "complete-kernel.inc"
#undef NEREID_FIL_WIDTH
}  // namespace baseline

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NEREID_FIL_X86_KERNELS 1
#pragma GCC push_options
#pragma GCC target("avx2,bmi,bmi2,popcnt")
namespace avx2 {
#define NEREID_FIL_WIDTH 8
#include "complete-kernel.inc"
#undef NEREID_FIL_WIDTH
}  // namespace avx2
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512cd,avx2,bmi,bmi2,popcnt")
namespace avx512 {
#define NEREID_FIL_WIDTH 16
#include "complete-kernel.inc"
#undef NEREID_FIL_WIDTH
}  // namespace avx512
#pragma GCC pop_options
#endif

// The kernel for `isa` ("avx512", "avx2", "baseline"; "auto": the widest this CPU runs), or null
// when this CPU or build lacks it.
inline SumFunction ChooseSum(const std::string& isa) {
#if defined(NEREID_FIL_X86_KERNELS)
  const bool hasAvx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  const bool hasAvx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2");
  if (isa == "avx512" || (isa == "auto" && hasAvx512)) return hasAvx512 ? avx512::Sum : nullptr;
  if (isa == "avx2" || (isa == "auto" && hasAvx2)) return hasAvx2 ? avx2::Sum : nullptr;
#endif
  return isa == "auto" || isa == "baseline" ? baseline::Sum : nullptr;
}

inline const char* NameOf(SumFunction sum) {
#if defined(NEREID_FIL_X86_KERNELS)
  if (sum == avx512::Sum) return "avx512";
  if (sum == avx2::Sum) return "avx2";
#endif
  return "baseline";
}

}  // namespace complete

#endif  // NEREID_FIL_COMPLETE_TREES_H_
