// The fil backend's native evaluator (issue 15): the trees' margins for a batch of rows, with the
// forest in one packed node array, blocks of rows walked level by level through one tree at a time,
// and the rows cut across threads for big batches. It computes exactly what
// src/backends/fil/predict.ts computes (the same double sums in the same tree order, the same split
// rules), which stays the fallback when this addon is not built or NEREID_FIL_FALLBACK=1.
//
//   create(forest)                                   -> a handle (the forest is copied)
//   sumTrees(handle, input, rows, sums)              -> undefined, on the calling thread
//   sumTreesAsync(handle, input, rows, sums, threads) -> a Promise, on libuv's pool plus threads - 1 more
//
// `input` is a Float32Array of rows * numFeatures, `sums` a Float64Array of rows * numGroups that
// receives each group's sum of leaf values (no base margin, no divisor, no transform: the caller's).
// NOTE: while sumTreesAsync runs, the caller must not touch `input` or `sums`; they are held by
// references so that the collector keeps them.
//
// Why no branch per node: a leaf points to itself with a NaN threshold, so walking a tree is
// exactly `depth` steps of `node = child + goesRight` for every row, and the rows of a block are
// independent loads that the core overlaps (the layout of FIL and XGBoost's predictors). Fewer than
// four rows walk 32 trees side by side instead, for the same reason (3 times faster for one row of a
// 500-tree forest).
#define NAPI_VERSION 8
#include <node_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

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

// One step of the walk from node `at` for the row `row`: the next node.
template <bool kHasComplexSplits>
inline int32_t Step(const Forest& forest, const Node* nodes, const float* row, int32_t at) {
  const Node& node = nodes[at];
  const float x = row[node.packed >> 4];
  int right;
  if (kHasComplexSplits && (node.packed & 7) > kNumericDefaultLeft) {
    right = GoesLeft(forest, at, x) ? 0 : 1;
  } else {
    // x >= t goes right; NaN goes right unless the default is left. A leaf (NaN threshold,
    // default left) never goes right, and its child is itself.
    right = (x >= node.threshold) | ((x != x) & !((node.packed >> 3) & 1));
  }
  return node.child + right;
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
    for (size_t t = 0; t < forest.roots.size(); t++) {
      const int32_t root = forest.roots[t];
      for (int r = 0; r < count; r++) at[r] = root;
      for (int32_t level = forest.treeDepth[t]; level > 0; level--) {
        // NOTE: Step written out: through the call (inlined) this loop measured 30 to 50 % slower.
        for (int r = 0; r < count; r++) {
          const Node& node = nodes[at[r]];
          const float x = block[r * features + (node.packed >> 4)];
          int right;
          if (kHasComplexSplits && (node.packed & 7) > kNumericDefaultLeft) {
            right = GoesLeft(forest, at[r], x) ? 0 : 1;
          } else {
            // x >= t goes right; NaN goes right unless the default is left. A leaf (NaN threshold,
            // default left) never goes right, and its child is itself.
            right = (x >= node.threshold) | ((x != x) & !((node.packed >> 3) & 1));
          }
          at[r] = node.child + right;
        }
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
        for (size_t j = 0; j < count; j++) at[j] = Step<kHasComplexSplits>(forest, nodes, row, at[j]);
      }
      for (size_t j = 0; j < count; j++) sums[r * groups + forest.treeGroup[first + j]] += forest.leafValue[at[j]];
    }
  }
}

void Sum(const Forest& forest, const float* input, int64_t rowBegin, int64_t rowEnd, double* sums) {
  const bool isFew = rowEnd - rowBegin < 4;
  if (forest.hasComplexSplits) {
    isFew ? SumFewRows<true>(forest, input, rowBegin, rowEnd, sums) : SumRows<true>(forest, input, rowBegin, rowEnd, sums);
  } else {
    isFew ? SumFewRows<false>(forest, input, rowBegin, rowEnd, sums) : SumRows<false>(forest, input, rowBegin, rowEnd, sums);
  }
}

// Rows cut into `threads` ranges of whole blocks; the calling thread takes the first.
void SumThreaded(const Forest& forest, const float* input, int64_t rows, double* sums, int threads) {
  const int64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  const int64_t count = std::max<int64_t>(1, std::min<int64_t>(threads, blocks));
  auto rangeOf = [&](int64_t index) {
    return std::min(rows, ((blocks * index) / count) * kBlockRows);
  };
  std::vector<std::thread> helpers;
  int64_t started = 1;
  // A thread that cannot start (std::system_error) leaves its rows, and the rest, to this one.
  try {
    for (; started < count; started++) {
      helpers.emplace_back([&, started] { Sum(forest, input, rangeOf(started), rangeOf(started + 1), sums); });
    }
  } catch (const std::system_error&) {
  }
  Sum(forest, input, 0, rangeOf(1), sums);
  if (started < count) Sum(forest, input, rangeOf(started), rows, sums);
  for (std::thread& helper : helpers) helper.join();
}

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

void DeleteForest(napi_env, void* data, void*) { delete static_cast<Forest*>(data); }

// create(forest): the Forest of src/backends/fil/forest.ts, checked and packed.
napi_value Create(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CALL(napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  if (argc < 1) return Throw(env, "create(forest): forest expected");
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

napi_value SumTrees(napi_env env, napi_callback_info info) {
  Call call;
  napi_value argv[4];
  if (!ReadCall(env, info, &call, argv, 4)) return Throw(env, "sumTrees(handle, input: Float32Array, rows, sums: Float64Array): bad arguments");
  Sum(*call.forest, call.input, 0, call.rows, call.sums);
  return nullptr;
}

struct AsyncCall {
  Call call;
  napi_deferred deferred = nullptr;
  napi_async_work work = nullptr;
  napi_ref refs[3] = {nullptr, nullptr, nullptr};
};

void ExecuteAsync(napi_env, void* data) {
  const Call& call = static_cast<AsyncCall*>(data)->call;
  SumThreaded(*call.forest, call.input, call.rows, call.sums, call.threads);
}

void CompleteAsync(napi_env env, napi_status status, void* data) {
  std::unique_ptr<AsyncCall> async(static_cast<AsyncCall*>(data));
  for (napi_ref ref : async->refs) napi_delete_reference(env, ref);
  napi_delete_async_work(env, async->work);
  napi_value result;
  if (status == napi_ok) {
    napi_get_undefined(env, &result);
    napi_resolve_deferred(env, async->deferred, result);
  } else {
    napi_value message;
    napi_create_string_utf8(env, "sumTreesAsync: the work was cancelled", NAPI_AUTO_LENGTH, &message);
    napi_create_error(env, nullptr, message, &result);
    napi_reject_deferred(env, async->deferred, result);
  }
}

napi_value SumTreesAsync(napi_env env, napi_callback_info info) {
  auto async = std::make_unique<AsyncCall>();
  napi_value argv[5];
  if (!ReadCall(env, info, &async->call, argv, 5)) return Throw(env, "sumTreesAsync(handle, input: Float32Array, rows, sums: Float64Array, threads): bad arguments");
  CALL(napi_create_reference(env, argv[0], 1, &async->refs[0]));
  CALL(napi_create_reference(env, argv[1], 1, &async->refs[1]));
  CALL(napi_create_reference(env, argv[3], 1, &async->refs[2]));
  napi_value promise, name;
  CALL(napi_create_promise(env, &async->deferred, &promise));
  CALL(napi_create_string_utf8(env, "nereid_fil", NAPI_AUTO_LENGTH, &name));
  CALL(napi_create_async_work(env, nullptr, name, ExecuteAsync, CompleteAsync, async.get(), &async->work));
  CALL(napi_queue_async_work(env, async->work));
  async.release();
  return promise;
}

napi_value Init(napi_env env, napi_value exports) {
  const napi_property_descriptor properties[] = {
      {"create", nullptr, Create, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"sumTrees", nullptr, SumTrees, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"sumTreesAsync", nullptr, SumTreesAsync, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
