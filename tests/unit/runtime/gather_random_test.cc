// GatherBlocks and GatherTuples (kernels/movement.h) against their per-element references on
// seeded random shapes and indices: several ranks and element sizes, repeated indices, empty
// outer/index/inner extents and a large case.
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/movement.h"
#include "runtime/kernels/reference/movement.h"

namespace onnx_bcast::runtime {
namespace {

std::vector<uint8_t> RandomBytes(std::mt19937* rng, int64_t n) {
  std::vector<uint8_t> v(static_cast<size_t>(n));
  for (uint8_t& b : v) b = static_cast<uint8_t>((*rng)() & 0xff);
  return v;
}

TEST(GatherKernels, BlocksMatchReference) {
  std::mt19937 rng(21);
  struct Case {
    int64_t outer, dim, inner, n;
  };
  std::vector<Case> cases = {{1, 1, 1, 1}, {0, 3, 2, 4}, {2, 5, 0, 3}, {3, 4, 2, 0},
                             {1, 64, 1024, 128}};  // the last one large
  for (int i = 0; i < 40; ++i) {
    cases.push_back({1 + static_cast<int64_t>(rng() % 4), 1 + static_cast<int64_t>(rng() % 6),
                     1 + static_cast<int64_t>(rng() % 5), static_cast<int64_t>(rng() % 7)});
  }
  for (const Case& c : cases) {
    for (size_t es : {1, 2, 4, 8}) {
      const std::vector<uint8_t> src = RandomBytes(&rng, c.outer * c.dim * c.inner * es);
      std::vector<int64_t> idx(static_cast<size_t>(c.n));
      for (int64_t& k : idx) k = static_cast<int64_t>(rng() % c.dim);  // repeats allowed
      const size_t out_bytes = static_cast<size_t>(c.outer * c.n * c.inner) * es;
      std::vector<uint8_t> fast(out_bytes, 0xAA), ref(out_bytes, 0x55);
      GatherBlocks(src.data(), c.outer, c.dim, c.inner, idx, es, fast.data());
      reference::GatherBlocks(src.data(), c.outer, c.dim, c.inner, idx, es, ref.data());
      EXPECT_EQ(fast, ref) << c.outer << "x" << c.dim << "x" << c.inner << " n=" << c.n;
    }
  }
}

TEST(GatherKernels, TuplesMatchReference) {
  std::mt19937 rng(22);
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<int64_t> dims(1 + rng() % 4);
    for (int64_t& d : dims) d = 1 + static_cast<int64_t>(rng() % 4);
    if (trial == 0) dims = {64, 32, 256};  // large blocks
    const int rank = static_cast<int>(dims.size());
    const int64_t tuple_len = 1 + static_cast<int64_t>(rng() % rank);
    const int64_t batches = static_cast<int64_t>(rng() % 3);  // 0: nothing to gather
    const int64_t per_batch = static_cast<int64_t>(rng() % 5);
    int64_t batch_size = 1, block = 1;
    for (int j = 0; j < rank; ++j) {
      batch_size *= dims[j];
      if (j >= tuple_len) block *= dims[j];
    }
    const size_t es = size_t{1} << (rng() % 4);
    const std::vector<uint8_t> src = RandomBytes(&rng, batches * batch_size * es);
    std::vector<int64_t> idx(static_cast<size_t>(batches * per_batch * tuple_len));
    for (size_t t = 0; t < idx.size(); ++t) {
      idx[t] = static_cast<int64_t>(rng() % dims[t % tuple_len]);
    }
    const size_t out_bytes = static_cast<size_t>(batches * per_batch * block) * es;
    std::vector<uint8_t> fast(out_bytes, 0xAA), ref(out_bytes, 0x55);
    GatherTuples(src.data(), batches, dims, per_batch, tuple_len, idx, es, fast.data());
    reference::GatherTuples(src.data(), batches, dims, per_batch, tuple_len, idx, es, ref.data());
    EXPECT_EQ(fast, ref) << "trial " << trial;
  }
}

}  // namespace
}  // namespace onnx_bcast::runtime
