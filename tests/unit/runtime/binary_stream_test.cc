// The streaming-store path of the fast binary kernels: StreamLine, and streamed
// BinaryOp/Where (non-temporal stores a cache line at a time) against the reference
// kernels on long odd rows, unaligned borrowed outputs, zero-size outputs and several
// threads; plus the rule that outputs below the parallel threshold never reach the pool.
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/broadcast_plan.h"
#include "runtime/kernels/binary.h"
#include "runtime/kernels/reference/binary.h"
#include "runtime/kernels/stream_store.h"
#include "runtime/thread_pool.h"
#include "tests/unit/runtime/test_util.h"

namespace onnx_bcast::runtime {
namespace {

using testing::BroadcastShapes;
using testing::FirstMismatch;
using testing::Poison;
using testing::RandomTensor;

TEST(StreamLineTest, CopiesOneLineExactly) {
  alignas(64) unsigned char src[64];
  alignas(64) unsigned char dst[192];
  for (int i = 0; i < 64; ++i) src[i] = static_cast<unsigned char>(i * 7 + 1);
  std::memset(dst, 0xAB, sizeof(dst));
  StreamLine(dst + 64, src);
  StreamFence();
  EXPECT_EQ(std::memcmp(dst + 64, src, 64), 0);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(dst[i], 0xAB);
    EXPECT_EQ(dst[128 + i], 0xAB);
  }
}

ThreadPool& TestPool() {
  static ThreadPool* pool = new ThreadPool(2);
  return *pool;
}

struct StreamCase {
  std::vector<int64_t> a, b;
  const char* what;
};

// Long rows of odd lengths, so the staged chunks, the aligning head and the tails all run.
const StreamCase kCases[] = {
    {{3, 1031}, {3, 1031}, "same"},
    {{5, 1, 997}, {}, "scalar right"},
    {{}, {4099}, "scalar left"},
    {{7, 1025}, {1025}, "row"},
    {{1025}, {7, 1025}, "row, small left"},
    {{9, 1030}, {9, 1}, "column"},
    {{9, 1}, {9, 1030}, "column, small left"},
    {{5, 1, 1027}, {1, 6, 1027}, "bidirectional"},
    {{4, 1, 2053}, {4, 3, 2053}, "middle axis"},
    {{2, 3, 1, 700}, {3, 1, 1}, "general, scalar inner"},
    {{3, 0, 1031}, {1031}, "zero-size"},
};

struct OpType {
  OpKind op;
  DType dtype;
};

const OpType kOps[] = {
    {OpKind::kAdd, DType::kFloat32}, {OpKind::kDiv, DType::kFloat64},
    {OpKind::kMax, DType::kFloat16}, {OpKind::kSub, DType::kInt8},
    {OpKind::kMul, DType::kInt64},   {OpKind::kAnd, DType::kBool},
    {OpKind::kLess, DType::kInt32},  {OpKind::kPow, DType::kFloat32},
};

// Runs `op` with every output streamed into a borrowed buffer `shift` elements past a
// 64-byte boundary, so the aligning head takes every length.
void ExpectStreamedMatchesReference(const OpType& o, const StreamCase& c, int shift, int threads,
                                    std::mt19937_64& rng) {
  const std::vector<int64_t> out_shape = BroadcastShapes(c.a, c.b);
  const std::string where = absl::StrCat(OpKindName(o.op), " ", DTypeName(o.dtype), " ", c.what,
                                         " shift ", shift, " threads ", threads);
  Tensor a = RandomTensor(rng, o.dtype, c.a);
  Tensor b = RandomTensor(rng, o.dtype, c.b);
  const DType out_dtype = BinaryOutputDType(o.op, o.dtype);
  Tensor expected = Tensor::Allocate(out_dtype, out_shape).value();
  ASSERT_TRUE(reference::BinaryOp(o.op, a, b, &expected).ok()) << where;
  const int64_t count = expected.num_elements();
  const size_t es = DTypeSize(out_dtype);
  Tensor storage =
      Tensor::Allocate(DType::kUInt8, {(count + shift) * static_cast<int64_t>(es) + 64}).value();
  std::memset(storage.raw_data(), 0x5A, storage.byte_size());
  char* base = static_cast<char*>(storage.raw_data()) + shift * es;
  Tensor out = Tensor::Borrow(out_dtype, out_shape, base).value();
  BinaryOptions opts;
  opts.streaming_threshold_bytes = 0;
  opts.threads = threads;
  opts.pool = &TestPool();
  opts.parallel_threshold = 1;
  ASSERT_TRUE(BinaryOp(o.op, a, b, &out, opts).ok()) << where;
  ASSERT_EQ(FirstMismatch(out, expected), -1) << where;
  const auto* bytes = static_cast<const unsigned char*>(storage.raw_data());
  for (size_t i = 0; i < shift * es; ++i) ASSERT_EQ(bytes[i], 0x5A) << where << " head guard";
  for (size_t i = shift * es + count * es; i < storage.byte_size(); ++i) {
    ASSERT_EQ(bytes[i], 0x5A) << where << " tail guard";
  }
}

TEST(BinaryStreamTest, StreamedMatchesReferenceOnEveryPattern) {
  std::mt19937_64 rng(77);
  for (const OpType& o : kOps) {
    for (const StreamCase& c : kCases) {
      for (int shift : {0, 1, 3, 17}) {
        for (int threads : {1, 3}) ExpectStreamedMatchesReference(o, c, shift, threads, rng);
      }
    }
  }
}

TEST(BinaryStreamTest, StreamedInPlaceMatchesReference) {
  std::mt19937_64 rng(3);
  Tensor a = RandomTensor(rng, DType::kFloat32, {6, 2050});
  Tensor bias = RandomTensor(rng, DType::kFloat32, {2050});
  Tensor expected = Tensor::Allocate(DType::kFloat32, {6, 2050}).value();
  ASSERT_TRUE(reference::BinaryOp(OpKind::kAdd, a, bias, &expected).ok());
  Tensor alias = Tensor::Borrow(DType::kFloat32, {6, 2050}, a.raw_data()).value();
  BinaryOptions opts;
  opts.streaming_threshold_bytes = 0;
  opts.threads = 2;
  opts.pool = &TestPool();
  opts.parallel_threshold = 1;
  ASSERT_TRUE(BinaryOp(OpKind::kAdd, a, bias, &alias, opts).ok());
  EXPECT_EQ(FirstMismatch(a, expected), -1);
}

TEST(BinaryStreamTest, StreamedWhereMatchesReference) {
  std::mt19937_64 rng(4);
  for (DType dtype : {DType::kFloat32, DType::kInt8, DType::kFloat64}) {
    Tensor cond = RandomTensor(rng, DType::kBool, {3, 1, 1029});
    Tensor x = RandomTensor(rng, dtype, {1, 4, 1029});
    Tensor y = RandomTensor(rng, dtype, {});
    Tensor expected = Tensor::Allocate(dtype, {3, 4, 1029}).value();
    Tensor fast = Tensor::Allocate(dtype, {3, 4, 1029}).value();
    Poison(fast);
    ASSERT_TRUE(reference::Where(cond, x, y, &expected).ok());
    BinaryOptions opts;
    opts.streaming_threshold_bytes = 0;
    opts.threads = 2;
    opts.pool = &TestPool();
    opts.parallel_threshold = 1;
    ASSERT_TRUE(Where(cond, x, y, &fast, opts).ok());
    EXPECT_EQ(FirstMismatch(fast, expected), -1) << DTypeName(dtype);
  }
}

TEST(BinaryStreamTest, DefaultThresholdStreamsOnlyLargeOutputsAndBothAgree) {
  // Just below and just above the default threshold: the results must not depend on it.
  const int64_t threshold = BinaryOptions{}.streaming_threshold_bytes;
  std::mt19937_64 rng(5);
  for (int64_t rows : {threshold / 4 / 1024 - 1, threshold / 4 / 1024 + 1}) {
    Tensor a = RandomTensor(rng, DType::kFloat32, {rows, 1024});
    Tensor b = RandomTensor(rng, DType::kFloat32, {rows, 1});
    Tensor expected = Tensor::Allocate(DType::kFloat32, {rows, 1024}).value();
    Tensor fast = Tensor::Allocate(DType::kFloat32, {rows, 1024}).value();
    ASSERT_TRUE(reference::BinaryOp(OpKind::kMul, a, b, &expected).ok());
    BinaryOptions opts;
    opts.threads = 2;
    ASSERT_TRUE(BinaryOp(OpKind::kMul, a, b, &fast, opts).ok());
    EXPECT_EQ(FirstMismatch(fast, expected), -1) << rows;
  }
}

TEST(BinaryThreadingTest, SmallOutputsNeverReachThePool) {
  ThreadPool pool(2);
  std::mt19937_64 rng(6);
  BinaryOptions opts;
  opts.threads = 2;
  opts.pool = &pool;
  // The tiny case and an output one element below the threshold.
  const std::pair<std::vector<int64_t>, std::vector<int64_t>> small[] = {
      {{1, 3, 8, 8}, {3, 1, 1}}, {{opts.parallel_threshold - 1}, {1}}};
  for (const auto& [sa, sb] : small) {
    Tensor a = RandomTensor(rng, DType::kFloat32, sa);
    Tensor b = RandomTensor(rng, DType::kFloat32, sb);
    Tensor out = Tensor::Allocate(DType::kFloat32, BroadcastShapes(sa, sb)).value();
    ASSERT_TRUE(BinaryOp(OpKind::kAdd, a, b, &out, opts).ok());
  }
  EXPECT_EQ(pool.handoffs(), 0);
  // At the threshold the work is split.
  Tensor a = RandomTensor(rng, DType::kFloat32, {opts.parallel_threshold});
  Tensor b = RandomTensor(rng, DType::kFloat32, {1});
  Tensor out = Tensor::Allocate(DType::kFloat32, {opts.parallel_threshold}).value();
  Tensor expected = Tensor::Allocate(DType::kFloat32, {opts.parallel_threshold}).value();
  ASSERT_TRUE(BinaryOp(OpKind::kAdd, a, b, &out, opts).ok());
  ASSERT_TRUE(reference::BinaryOp(OpKind::kAdd, a, b, &expected).ok());
  EXPECT_EQ(pool.handoffs(), 1);
  EXPECT_EQ(FirstMismatch(out, expected), -1);
  // One thread never hands off, whatever the size.
  opts.threads = 1;
  ASSERT_TRUE(BinaryOp(OpKind::kAdd, a, b, &out, opts).ok());
  EXPECT_EQ(pool.handoffs(), 1);
}

}  // namespace
}  // namespace onnx_bcast::runtime
