// The fil backend's native evaluator (issue 15): the trees' margins for a batch of rows, with the
// forest in one packed node array, blocks of rows walked level by level through one tree at a time,
// and the rows cut across threads for big batches. It computes exactly what
// src/backends/fil/predict.ts computes (the same double sums in the same tree order, the same split
// rules), which stays the fallback when this addon is not built or NEREID_FIL_FALLBACK=1.
//
//   create(forest[, kernel])                          -> a handle (the forest is copied)
//   kernel(handle)                                    -> "walk", "avx512", "avx2" or "baseline"
//   sumTrees(handle, input, rows, sums)               -> undefined, on the calling thread
//   sumTreesAsync(handle, input, rows, sums, threads) -> a Promise, on `threads` of the evaluator threads
//
// `input` is a Float32Array of rows * numFeatures, `sums` a Float64Array of rows * numGroups that
// receives each group's sum of leaf values (no base margin, no divisor, no transform: the caller's).
// NOTE: while sumTreesAsync runs, the caller must not touch `input` or `sums`; they are held by
// references so that the collector keeps them.
//
// Two kernels sum 4 rows or more. A forest of numeric splits at most 5 deep is laid out as complete
// trees and every split decided 16 rows at a time in vector registers (complete-trees.h; `kernel`
// names the instruction set, chosen at run time: 3 to 4 times less CPU than the walk on the example
// model). Any other forest is walked:
//
// Why no branch per node: a leaf points to itself with a NaN threshold, so walking a tree is
// exactly `depth` steps of `node = child + goesRight` for every row, and the rows of a block are
// independent loads that the core overlaps (the layout of FIL and XGBoost's predictors). Fewer than
// four rows walk 32 trees side by side instead, for the same reason (3 times faster for one row of a
// 500-tree forest).
#define NAPI_VERSION 8
#include <node_api.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "complete-trees.h"

namespace {

constexpr int kNumericDefaultRight = 0;
constexpr int kNumericDefaultLeft = 1;
constexpr int kZeroAsMissing = 2;
constexpr int kCategoryRight = 3;
constexpr int kCategoryLeft = 4;
constexpr int kBlockRows = 64;
constexpr int32_t kMaxFeature = (1 << 27) - 1;

// 12 bytes. bits of `packed`: feature << 4 | defaultLeft << 3 | kind. The threshold is forest.ts's
// (a double) rounded up to a float: for a float x, x >= t exactly when x >= that float, and the
// inputs are float32.
struct Node {
  float threshold;
  int32_t packed;
  int32_t child;
};

float RoundUpToFloat(double threshold) {
  float rounded = static_cast<float>(threshold);
  if (static_cast<double>(rounded) < threshold) rounded = std::nextafter(rounded, INFINITY);
  return rounded;
}

struct Forest {
  int32_t numFeatures = 0;
  int32_t numGroups = 0;
  bool hasComplexSplits = false;
  std::vector<Node> nodes;
  std::vector<double> leafValue;
  std::vector<int32_t> roots;
  std::vector<int32_t> treeGroup;
  std::vector<int32_t> treeDepth;
  std::vector<int32_t> categoryStart;
  std::vector<int32_t> categoryCount;
  std::vector<uint32_t> categoryBits;
  // Present for a forest of numeric splits only, at most complete::kMaxCompleteDepth deep, unless
  // create() was asked for the walk; `kernel` names what sums 4 rows or more.
  std::unique_ptr<complete::Layout> complete;
  complete::SumFunction completeSum = nullptr;
  std::string kernel = "walk";
};

bool IsCategoryInSet(const Forest& forest, int32_t n, double category) {
  if (category > 4294967295.0) return false;
  const uint32_t value = static_cast<uint32_t>(category);
  const uint32_t word = value >> 5;
  if (word >= static_cast<uint32_t>(forest.categoryCount[n])) return false;
  return (forest.categoryBits[forest.categoryStart[n] + word] & (1u << (value & 31))) != 0;
}

// predict.ts goesLeft, rule for rule.
bool GoesLeft(const Forest& forest, int32_t n, float x) {
  const Node& node = forest.nodes[n];
  const int kind = node.packed & 7;
  const bool defaultLeft = ((node.packed >> 3) & 1) != 0;
  if (kind == kNumericDefaultRight) return x < node.threshold;
  if (kind == kNumericDefaultLeft) return !(x >= node.threshold);
  if (std::isnan(x)) return defaultLeft;
  if (kind == kZeroAsMissing) return std::fabs(x) <= 1e-35 ? defaultLeft : x < node.threshold;
  const double category = std::trunc(x);
  const bool isInSet = category >= 0 && IsCategoryInSet(forest, n, category);
  if (kind == kCategoryRight) return category < 0 || category >= 16777216.0 || !isInSet;
  if (kind == kCategoryLeft) return isInSet;
  return x < node.threshold;
}

// One step of the walk from node `at` for the row `row`: the next node. kMayHaveNaN false: no
// feature of the row is NaN, so `x >= t` alone decides.
template <bool kHasComplexSplits, bool kMayHaveNaN>
inline int32_t Step(const Forest& forest, const Node* nodes, const float* row, int32_t at) {
  const Node& node = nodes[at];
  const float x = row[node.packed >> 4];
  int right;
  if (kHasComplexSplits && (node.packed & 7) > kNumericDefaultLeft) {
    right = GoesLeft(forest, at, x) ? 0 : 1;
  } else if (kMayHaveNaN) {
    // x >= t goes right; NaN goes right unless the default is left. A leaf (NaN threshold,
    // default left) never goes right, and its child is itself.
    right = (x >= node.threshold) | ((x != x) & !((node.packed >> 3) & 1));
  } else {
    right = x >= node.threshold;  // a leaf's NaN threshold still keeps it where it is
  }
  return node.child + right;
}

// The rows of a block walked in groups of kLanes through every level of one tree: the group's nodes
// held in registers rather than reloaded from `at` at each level (5 to 15 % less CPU per row and
// tree than one pass over the block per level, measured alternately on both bench forests).
constexpr int kLanes = 16;

template <bool kHasComplexSplits, bool kMayHaveNaN>
inline void WalkBlock(const Forest& forest, const Node* nodes, const float* block, int32_t features, int count, int32_t depth, int32_t* at) {
  int r = 0;
  for (; r + kLanes <= count; r += kLanes) {
    int32_t lane[kLanes];
    for (int j = 0; j < kLanes; j++) lane[j] = at[r + j];
    for (int32_t level = depth; level > 0; level--) {
#pragma GCC unroll 16
      for (int j = 0; j < kLanes; j++) lane[j] = Step<kHasComplexSplits, kMayHaveNaN>(forest, nodes, block + (r + j) * features, lane[j]);
    }
    for (int j = 0; j < kLanes; j++) at[r + j] = lane[j];
  }
  for (int32_t level = depth; level > 0 && r < count; level--) {
    for (int k = r; k < count; k++) at[k] = Step<kHasComplexSplits, kMayHaveNaN>(forest, nodes, block + k * features, at[k]);
  }
}

bool HasNaN(const float* values, int64_t count) {
  bool isNaN = false;
  for (int64_t i = 0; i < count; i++) isNaN |= values[i] != values[i];
  return isNaN;
}

template <bool kHasComplexSplits>
void SumRows(const Forest& forest, const float* input, int64_t rowBegin, int64_t rowEnd, double* sums) {
  const int32_t features = forest.numFeatures;
  const int32_t groups = forest.numGroups;
  const Node* nodes = forest.nodes.data();
  const double* leafValue = forest.leafValue.data();
  std::fill(sums + rowBegin * groups, sums + rowEnd * groups, 0.0);
  int32_t at[kBlockRows];
  for (int64_t start = rowBegin; start < rowEnd; start += kBlockRows) {
    const int count = static_cast<int>(std::min<int64_t>(kBlockRows, rowEnd - start));
    const float* block = input + start * features;
    // Complex splits test NaN themselves (GoesLeft); numeric ones need the NaN rule only when a value is NaN.
    const bool mayHaveNaN = kHasComplexSplits || HasNaN(block, static_cast<int64_t>(count) * features);
    for (size_t t = 0; t < forest.roots.size(); t++) {
      const int32_t root = forest.roots[t];
      for (int r = 0; r < count; r++) at[r] = root;
      if (mayHaveNaN) {
        WalkBlock<kHasComplexSplits, true>(forest, nodes, block, features, count, forest.treeDepth[t], at);
      } else {
        WalkBlock<kHasComplexSplits, false>(forest, nodes, block, features, count, forest.treeDepth[t], at);
      }
      const int32_t group = forest.treeGroup[t];
      double* out = sums + start * groups + group;
      for (int r = 0; r < count; r++) out[r * groups] += leafValue[at[r]];
    }
  }
}

// For a few rows, where a block would walk one row at a time: each row walks kTreeBlock trees at
// once instead (independent loads again), and adds their leaves in tree order as SumRows does.
template <bool kHasComplexSplits>
void SumFewRows(const Forest& forest, const float* input, int64_t rowBegin, int64_t rowEnd, double* sums) {
  constexpr size_t kTreeBlock = 32;
  const int32_t groups = forest.numGroups;
  const Node* nodes = forest.nodes.data();
  const size_t treeCount = forest.roots.size();
  std::fill(sums + rowBegin * groups, sums + rowEnd * groups, 0.0);
  int32_t at[kTreeBlock];
  for (int64_t r = rowBegin; r < rowEnd; r++) {
    const float* row = input + r * forest.numFeatures;
    for (size_t first = 0; first < treeCount; first += kTreeBlock) {
      const size_t count = std::min(kTreeBlock, treeCount - first);
      int32_t depth = 0;
      for (size_t j = 0; j < count; j++) {
        at[j] = forest.roots[first + j];
        depth = std::max(depth, forest.treeDepth[first + j]);
      }
      for (int32_t level = depth; level > 0; level--) {
        for (size_t j = 0; j < count; j++) at[j] = Step<kHasComplexSplits, true>(forest, nodes, row, at[j]);
      }
      for (size_t j = 0; j < count; j++) sums[r * groups + forest.treeGroup[first + j]] += forest.leafValue[at[j]];
    }
  }
}

void Sum(const Forest& forest, const float* input, int64_t rowBegin, int64_t rowEnd, double* sums) {
  const bool isFew = rowEnd - rowBegin < 4;
  if (!isFew && forest.complete != nullptr) return forest.completeSum(*forest.complete, input, rowBegin, rowEnd, sums);
  if (forest.hasComplexSplits) {
    isFew ? SumFewRows<true>(forest, input, rowBegin, rowEnd, sums) : SumRows<true>(forest, input, rowBegin, rowEnd, sums);
  } else {
    isFew ? SumFewRows<false>(forest, input, rowBegin, rowEnd, sums) : SumRows<false>(forest, input, rowBegin, rowEnd, sums);
  }
}

// ---- the evaluator threads ----
//
// One pool per N-API environment (the main thread's, or a worker thread's), created with the first
// batch that needs it and grown to the most threads a call asked for; its threads stay parked on a
// condition variable between batches, so a batch costs a wake-up, not a thread start (a
// std::thread per batch measured about 0.8 ms per hand-off, docs/benchmarks.md "Tree models").
// A batch is cut into `threads` tasks of whole blocks; the thread that finishes a batch's last task
// hands it back to the event loop through the one threadsafe function, which settles its promise.
//
//   sumTreesAsync ─▶ tasks ─▶ [thread 1 .. n, parked] ─▶ last task done ─▶ threadsafe function ─▶ resolve

struct Job {
  const Forest* forest = nullptr;
  const float* input = nullptr;
  double* sums = nullptr;
  std::atomic<int> remaining{0};
  napi_deferred deferred = nullptr;
  napi_ref refs[3] = {nullptr, nullptr, nullptr};
};

struct Task {
  Job* job;
  int64_t rowBegin;
  int64_t rowEnd;
};

class Pool {
 public:
  static constexpr int kMaxThreads = 256;

  // On the event loop's thread: starts threads up to `wanted`; fewer when the system refuses one
  // (the tasks then wait for those there are). False when there is none at all.
  bool EnsureThreads(int wanted) {
    wanted = std::min(wanted, kMaxThreads);
    try {
      while (static_cast<int>(threads_.size()) < wanted) threads_.emplace_back([this] { Run(); });
    } catch (const std::system_error&) {
    }
    return !threads_.empty();
  }

  // On the event loop's thread, after EnsureThreads: queues the job's tasks.
  void Submit(napi_env env, Job* job, int64_t rows, int threads) {
    const int64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
    const int64_t count = std::max<int64_t>(1, std::min<int64_t>(threads, blocks));
    const auto rangeOf = [&](int64_t index) { return std::min(rows, ((blocks * index) / count) * kBlockRows); };
    job->remaining.store(static_cast<int>(count));
    if (inFlight_++ == 0) napi_ref_threadsafe_function(env, done_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (int64_t index = 0; index < count; index++) tasks_.push_back({job, rangeOf(index), rangeOf(index + 1)});
    }
    if (count == 1) {
      wake_.notify_one();
    } else {
      wake_.notify_all();
    }
  }

  // On the event loop's thread, once per finished job.
  void Finished(napi_env env) {
    if (--inFlight_ == 0) napi_unref_threadsafe_function(env, done_);
  }

  bool Start(napi_env env, napi_threadsafe_function_call_js callJs) {
    napi_value name;
    if (napi_create_string_utf8(env, "nereid_fil", NAPI_AUTO_LENGTH, &name) != napi_ok) return false;
    if (napi_create_threadsafe_function(env, nullptr, nullptr, name, 0, 1, nullptr, nullptr, this, callJs, &done_) != napi_ok) return false;
    // NOTE: referenced only while a batch is in flight, so that an idle pool never keeps the process alive.
    napi_unref_threadsafe_function(env, done_);
    return true;
  }

  // At the environment's teardown: the threads finish the task in hand and stop; queued tasks are dropped.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      isStopping_ = true;
      tasks_.clear();
    }
    wake_.notify_all();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    napi_release_threadsafe_function(done_, napi_tsfn_abort);
  }

 private:
  void Run() {
    for (;;) {
      Task task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return isStopping_ || !tasks_.empty(); });
        if (isStopping_) return;
        task = tasks_.front();
        tasks_.pop_front();
      }
      Job* job = task.job;
      Sum(*job->forest, job->input, task.rowBegin, task.rowEnd, job->sums);
      if (job->remaining.fetch_sub(1) == 1) napi_call_threadsafe_function(done_, job, napi_tsfn_blocking);
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> tasks_;
  std::vector<std::thread> threads_;
  bool isStopping_ = false;
  napi_threadsafe_function done_ = nullptr;
  int inFlight_ = 0;  // the event loop's thread only
};

// ---- N-API glue ----

napi_value Throw(napi_env env, const std::string& message) {
  napi_throw_type_error(env, nullptr, message.c_str());
  return nullptr;
}

#define CALL(call)                                                    \
  do {                                                                \
    if ((call) != napi_ok) return Throw(env, "N-API call failed: " #call); \
  } while (0)

template <typename T>
bool ReadArray(napi_env env, napi_value object, const char* name, napi_typedarray_type type, const T** data, size_t* length) {
  napi_value value;
  bool isTypedArray = false;
  if (napi_get_named_property(env, object, name, &value) != napi_ok) return false;
  if (napi_is_typedarray(env, value, &isTypedArray) != napi_ok || !isTypedArray) return false;
  napi_typedarray_type actual;
  void* raw = nullptr;
  if (napi_get_typedarray_info(env, value, &actual, length, &raw, nullptr, nullptr) != napi_ok || actual != type) return false;
  *data = static_cast<const T*>(raw);
  return true;
}

bool ReadInt(napi_env env, napi_value object, const char* name, int32_t* out) {
  napi_value value;
  return napi_get_named_property(env, object, name, &value) == napi_ok && napi_get_value_int32(env, value, out) == napi_ok;
}

// Writes the subtree of node n at breadth-first position p (level `level`) of a complete tree of
// depth D: a leaf fills every position and leaf below it.
void FillComplete(const Forest& forest, int32_t n, int p, int level, complete::Split* splits, double* leaves) {
  const int depth = forest.complete->depth;
  const Node& node = forest.nodes[n];
  if (node.child == n) {
    const int index = p - ((1 << level) - 1);
    std::fill(leaves + (index << (depth - level)), leaves + ((index + 1) << (depth - level)), forest.leafValue[n]);
    for (int below = level; below < depth; below++) {
      const int first = ((1 << below) - 1) + ((index << (below - level)));
      std::fill(splits + first, splits + first + (1 << (below - level)), complete::Split{0.0f, 0});
    }
    return;
  }
  const bool isDefaultRight = ((node.packed >> 3) & 1) == 0;
  splits[p] = {node.threshold, (node.packed >> 4) * complete::kLanes | (isDefaultRight ? 1 : 0)};
  FillComplete(forest, node.child, 2 * p + 1, level + 1, splits, leaves);
  FillComplete(forest, node.child + 1, 2 * p + 2, level + 1, splits, leaves);
}

// The complete-tree layout (complete-trees.h) for a shallow forest of numeric splits, with the
// kernel `wanted` ("auto", "avx512", "avx2", "baseline"); "walk", or a forest that does not fit,
// keeps the walk. False: `wanted` is not on this CPU or build, or not a kernel.
bool BuildComplete(Forest* forest, const std::string& wanted) {
  int32_t depth = 0;
  for (int32_t treeDepth : forest->treeDepth) depth = std::max(depth, treeDepth);
  if (wanted == "walk") return true;
  const complete::SumFunction sum = complete::ChooseSum(wanted);
  if (sum == nullptr) return false;
  if (forest->hasComplexSplits || depth > complete::kMaxCompleteDepth || forest->numFeatures > complete::kMaxFeatures) return true;
  auto layout = std::make_unique<complete::Layout>();
  layout->depth = depth;
  layout->numFeatures = forest->numFeatures;
  layout->numGroups = forest->numGroups;
  layout->treeGroup = forest->treeGroup;
  const size_t trees = forest->roots.size();
  layout->splits.resize(trees * ((1 << depth) - 1));
  layout->leaves.resize(trees << depth);
  forest->complete = std::move(layout);
  for (size_t t = 0; t < trees; t++) {
    FillComplete(*forest, forest->roots[t], 0, 0, forest->complete->splits.data() + t * ((1 << depth) - 1), forest->complete->leaves.data() + (t << depth));
  }
  forest->completeSum = sum;
  forest->kernel = complete::NameOf(sum);
  return true;
}

void DeleteForest(napi_env, void* data, void*) { delete static_cast<Forest*>(data); }

// create(forest): the Forest of src/backends/fil/forest.ts, checked and packed.
napi_value Create(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CALL(napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  if (argc < 1) return Throw(env, "create(forest): forest expected");
  std::string wanted = "auto";
  napi_valuetype kernelType = napi_undefined;
  if (argc > 1) CALL(napi_typeof(env, argv[1], &kernelType));
  if (kernelType != napi_undefined) {
    char name[16] = {0};
    size_t length = 0;
    if (napi_get_value_string_utf8(env, argv[1], name, sizeof name, &length) != napi_ok) return Throw(env, "create(forest, kernel): kernel must be a string");
    wanted.assign(name, length);
  }
  auto forest = std::make_unique<Forest>();
  const int32_t *roots, *treeGroup, *feature, *firstChild, *categoryStart, *categoryCount;
  const uint8_t *kind, *defaultLeft;
  const double* value;
  const uint32_t* categoryBits;
  size_t treeCount, groupLength, nodeCount, length, bitCount;
  bool isRead = ReadInt(env, argv[0], "numFeatures", &forest->numFeatures) && ReadInt(env, argv[0], "numGroups", &forest->numGroups) &&
                ReadArray(env, argv[0], "roots", napi_int32_array, &roots, &treeCount) &&
                ReadArray(env, argv[0], "treeGroup", napi_int32_array, &treeGroup, &groupLength) && groupLength == treeCount &&
                ReadArray(env, argv[0], "feature", napi_int32_array, &feature, &nodeCount);
  const auto same = [&](bool isOk) { return isOk && length == nodeCount; };
  isRead = isRead && same(ReadArray(env, argv[0], "kind", napi_uint8_array, &kind, &length)) &&
           same(ReadArray(env, argv[0], "defaultLeft", napi_uint8_array, &defaultLeft, &length)) &&
           same(ReadArray(env, argv[0], "value", napi_float64_array, &value, &length)) &&
           same(ReadArray(env, argv[0], "firstChild", napi_int32_array, &firstChild, &length)) &&
           same(ReadArray(env, argv[0], "categoryStart", napi_int32_array, &categoryStart, &length)) &&
           same(ReadArray(env, argv[0], "categoryCount", napi_int32_array, &categoryCount, &length)) &&
           ReadArray(env, argv[0], "categoryBits", napi_uint32_array, &categoryBits, &bitCount);
  if (!isRead) return Throw(env, "create(forest): not a forest of src/backends/fil/forest.ts");
  if (forest->numFeatures < 1 || forest->numFeatures > kMaxFeature + 1 || forest->numGroups < 1) return Throw(env, "create(forest): feature or group count out of range");
  forest->nodes.resize(nodeCount);
  forest->leafValue.assign(nodeCount, 0.0);
  forest->categoryStart.assign(categoryStart, categoryStart + nodeCount);
  forest->categoryCount.assign(categoryCount, categoryCount + nodeCount);
  forest->categoryBits.assign(categoryBits, categoryBits + bitCount);
  std::vector<int32_t> depth(nodeCount, 0);
  for (size_t n = 0; n < nodeCount; n++) {
    Node& node = forest->nodes[n];
    if (feature[n] < 0) {
      node = {std::nanf(""), (1 << 3) | kNumericDefaultLeft, static_cast<int32_t>(n)};
      forest->leafValue[n] = value[n];
      continue;
    }
    // Children follow their parent in forest.ts's layout, so one pass in node order gives depths.
    const int32_t child = firstChild[n];
    if (child <= static_cast<int32_t>(n) || static_cast<size_t>(child) + 1 >= nodeCount || feature[n] >= forest->numFeatures || kind[n] > kCategoryLeft) {
      return Throw(env, "create(forest): node " + std::to_string(n) + " is malformed");
    }
    if (kind[n] >= kCategoryRight && static_cast<size_t>(categoryStart[n]) + categoryCount[n] > bitCount) return Throw(env, "create(forest): category set out of range");
    int bits = kind[n];
    // The numeric kinds carry their NaN direction in the kind; the others in defaultLeft.
    const bool isDefaultLeft = kind[n] == kNumericDefaultLeft || (kind[n] > kNumericDefaultLeft && defaultLeft[n] != 0);
    if (isDefaultLeft) bits |= 1 << 3;
    if (kind[n] > kNumericDefaultLeft) forest->hasComplexSplits = true;
    node = {RoundUpToFloat(value[n]), (feature[n] << 4) | bits, child};
    depth[child] = depth[child + 1] = depth[n] + 1;
  }
  for (size_t t = 0; t < treeCount; t++) {
    const int32_t begin = roots[t];
    const int32_t end = t + 1 < treeCount ? roots[t + 1] : static_cast<int32_t>(nodeCount);
    if (begin < 0 || end > static_cast<int32_t>(nodeCount) || begin >= end || treeGroup[t] < 0 || treeGroup[t] >= forest->numGroups) {
      return Throw(env, "create(forest): tree " + std::to_string(t) + " is malformed");
    }
    int32_t deepest = 0;
    for (int32_t n = begin; n < end; n++) deepest = std::max(deepest, depth[n]);
    forest->treeDepth.push_back(deepest);
  }
  forest->roots.assign(roots, roots + treeCount);
  forest->treeGroup.assign(treeGroup, treeGroup + treeCount);
  if (!BuildComplete(forest.get(), wanted)) return Throw(env, "create(forest, kernel): kernel '" + wanted + "' is not one this CPU runs (auto, walk, avx512, avx2, baseline)");
  napi_value handle;
  Forest* raw = forest.get();
  CALL(napi_create_external(env, raw, DeleteForest, nullptr, &handle));
  forest.release();
  return handle;
}

struct Call {
  Forest* forest = nullptr;
  const float* input = nullptr;
  double* sums = nullptr;
  int64_t rows = 0;
  int threads = 1;
};

// The arguments (handle, input, rows, sums[, threads]), checked against the forest.
bool ReadCall(napi_env env, napi_callback_info info, Call* call, napi_value* argv, size_t wanted) {
  size_t argc = wanted;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < wanted) return false;
  void* data = nullptr;
  if (napi_get_value_external(env, argv[0], &data) != napi_ok) return false;
  call->forest = static_cast<Forest*>(data);
  double rows = 0;
  if (napi_get_value_double(env, argv[2], &rows) != napi_ok || !(rows >= 0) || rows > 1e12 || rows != std::floor(rows)) return false;
  call->rows = static_cast<int64_t>(rows);
  napi_typedarray_type type;
  size_t length;
  void* raw;
  bool isTypedArray = false;
  if (napi_is_typedarray(env, argv[1], &isTypedArray) != napi_ok || !isTypedArray) return false;
  if (napi_get_typedarray_info(env, argv[1], &type, &length, &raw, nullptr, nullptr) != napi_ok || type != napi_float32_array) return false;
  if (static_cast<int64_t>(length) < call->rows * call->forest->numFeatures) return false;
  call->input = static_cast<const float*>(raw);
  if (napi_is_typedarray(env, argv[3], &isTypedArray) != napi_ok || !isTypedArray) return false;
  if (napi_get_typedarray_info(env, argv[3], &type, &length, &raw, nullptr, nullptr) != napi_ok || type != napi_float64_array) return false;
  if (static_cast<int64_t>(length) < call->rows * call->forest->numGroups) return false;
  call->sums = static_cast<double*>(raw);
  if (wanted > 4) {
    int32_t threads = 1;
    if (napi_get_value_int32(env, argv[4], &threads) != napi_ok || threads < 1 || threads > 1024) return false;
    call->threads = threads;
  }
  return true;
}

// kernel(handle): what sums 4 rows or more of the forest ("walk", "avx512", "avx2", "baseline").
napi_value Kernel(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  void* data = nullptr;
  CALL(napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  if (argc < 1 || napi_get_value_external(env, argv[0], &data) != napi_ok) return Throw(env, "kernel(handle): handle expected");
  napi_value name;
  CALL(napi_create_string_utf8(env, static_cast<Forest*>(data)->kernel.c_str(), NAPI_AUTO_LENGTH, &name));
  return name;
}

napi_value SumTrees(napi_env env, napi_callback_info info) {
  Call call;
  napi_value argv[4];
  if (!ReadCall(env, info, &call, argv, 4)) return Throw(env, "sumTrees(handle, input: Float32Array, rows, sums: Float64Array): bad arguments");
  Sum(*call.forest, call.input, 0, call.rows, call.sums);
  return nullptr;
}

// On the event loop's thread: settles a finished job's promise.
void FinishJob(napi_env env, napi_value, void* context, void* data) {
  std::unique_ptr<Job> job(static_cast<Job*>(data));
  if (env == nullptr) return;  // the environment is being torn down
  for (napi_ref ref : job->refs) napi_delete_reference(env, ref);
  napi_value result;
  napi_get_undefined(env, &result);
  napi_resolve_deferred(env, job->deferred, result);
  static_cast<Pool*>(context)->Finished(env);
}

void StopPool(void* data) {
  std::unique_ptr<Pool> pool(static_cast<Pool*>(data));
  pool->Stop();
}

// The environment's pool, started with its first batch.
Pool* PoolOf(napi_env env) {
  void* data = nullptr;
  if (napi_get_instance_data(env, &data) == napi_ok && data != nullptr) return static_cast<Pool*>(data);
  auto pool = std::make_unique<Pool>();
  if (!pool->Start(env, FinishJob)) return nullptr;
  // Registered after the threadsafe function, so it runs before N-API closes it (hooks run in reverse order).
  if (napi_add_env_cleanup_hook(env, StopPool, pool.get()) != napi_ok) return nullptr;
  if (napi_set_instance_data(env, pool.get(), nullptr, nullptr) != napi_ok) return nullptr;
  return pool.release();
}

napi_value SumTreesAsync(napi_env env, napi_callback_info info) {
  Call call;
  napi_value argv[5];
  if (!ReadCall(env, info, &call, argv, 5)) return Throw(env, "sumTreesAsync(handle, input: Float32Array, rows, sums: Float64Array, threads): bad arguments");
  Pool* pool = PoolOf(env);
  if (pool == nullptr || !pool->EnsureThreads(call.threads)) return Throw(env, "sumTreesAsync: the evaluator threads could not be started");
  auto job = std::make_unique<Job>();
  job->forest = call.forest;
  job->input = call.input;
  job->sums = call.sums;
  CALL(napi_create_reference(env, argv[0], 1, &job->refs[0]));
  CALL(napi_create_reference(env, argv[1], 1, &job->refs[1]));
  CALL(napi_create_reference(env, argv[3], 1, &job->refs[2]));
  napi_value promise;
  CALL(napi_create_promise(env, &job->deferred, &promise));
  if (call.rows == 0) {
    napi_value result;
    napi_get_undefined(env, &result);
    for (napi_ref ref : job->refs) napi_delete_reference(env, ref);
    CALL(napi_resolve_deferred(env, job->deferred, result));
    return promise;
  }
  pool->Submit(env, job.get(), call.rows, call.threads);
  job.release();
  return promise;
}

napi_value Init(napi_env env, napi_value exports) {
  const napi_property_descriptor properties[] = {
      {"create", nullptr, Create, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"kernel", nullptr, Kernel, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"sumTrees", nullptr, SumTrees, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"sumTreesAsync", nullptr, SumTreesAsync, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
