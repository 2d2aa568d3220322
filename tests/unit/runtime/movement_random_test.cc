// ConcatBlocks, SplitBlocks, ReverseSequence and Trilu (kernels/movement.h) against their
// per-element references on seeded random shapes: element sizes 1-8, empty parts, rows and
// batches, both ReverseSequence layouts with every length, Trilu for every k in and beyond
// the matrix (and INT64 extremes), upper and lower, in place and not.
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/movement.h"
#include "runtime/kernels/reference/movement.h"
#include "tests/unit/runtime/kernel_random_util.h"

namespace onnx_bcast::runtime::kernels::kernel_test {
namespace {

std::vector<uint8_t> RandomBytes(std::mt19937* rng, int64_t n) {
  std::vector<uint8_t> v(static_cast<size_t>(n));
  for (uint8_t& b : v) b = static_cast<uint8_t>((*rng)() & 0xff);
  return v;
}

size_t RandomElemSize(std::mt19937* rng) { return size_t{1} << Below(rng, 4); }

TEST(MovementKernels, ConcatAndSplitBlocksMatchReference) {
  std::mt19937 rng(111);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t es = RandomElemSize(&rng);
    const int64_t outer = trial % 10 == 0 ? 0 : 1 + Below(&rng, 5);
    std::vector<int64_t> blocks(1 + Below(&rng, 5));
    int64_t total = 0;
    for (int64_t& b : blocks) total += b = Below(&rng, 4) == 0 ? 0 : 1 + Below(&rng, 6);
    std::vector<std::vector<uint8_t>> parts;
    std::vector<const void*> sources;
    for (int64_t b : blocks) {
      parts.push_back(RandomBytes(&rng, outer * b * static_cast<int64_t>(es)));
      sources.push_back(parts.back().empty() ? nullptr : parts.back().data());
    }
    const size_t bytes = static_cast<size_t>(outer * total) * es;
    std::vector<uint8_t> fast(bytes, 0xAA), ref(bytes, 0x55);
    ConcatBlocks(sources, blocks, outer, es, fast.data());
    reference::ConcatBlocks(sources, blocks, outer, es, ref.data());
    EXPECT_EQ(fast, ref) << "concat trial " << trial;
    // Split the concatenation back into fresh parts.
    std::vector<std::vector<uint8_t>> split_fast, split_ref;
    std::vector<void*> fast_ptrs, ref_ptrs;
    for (int64_t b : blocks) {
      split_fast.emplace_back(static_cast<size_t>(outer * b) * es, 0xAA);
      split_ref.emplace_back(static_cast<size_t>(outer * b) * es, 0x55);
    }
    for (size_t p = 0; p < blocks.size(); ++p) {
      fast_ptrs.push_back(split_fast[p].empty() ? nullptr : split_fast[p].data());
      ref_ptrs.push_back(split_ref[p].empty() ? nullptr : split_ref[p].data());
    }
    SplitBlocks(ref.data(), outer, blocks, es, fast_ptrs);
    reference::SplitBlocks(ref.data(), outer, blocks, es, ref_ptrs);
    EXPECT_EQ(split_fast, split_ref) << "split trial " << trial;
    EXPECT_EQ(split_ref, parts) << "split trial " << trial;
  }
}

TEST(MovementKernels, ReverseSequenceMatchesReference) {
  std::mt19937 rng(112);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t es = RandomElemSize(&rng);
    const bool with_empty = trial % 7 == 0;
    const int64_t batch = with_empty ? Below(&rng, 3) : 1 + Below(&rng, 4);
    const int64_t steps = with_empty ? Below(&rng, 3) : 1 + Below(&rng, 6);
    const int64_t inner = with_empty ? Below(&rng, 3) : 1 + Below(&rng, 4);
    std::vector<int64_t> lens(static_cast<size_t>(batch));
    for (int64_t& l : lens) l = Below(&rng, steps + 1);
    const std::vector<uint8_t> src =
        RandomBytes(&rng, batch * steps * inner * static_cast<int64_t>(es));
    for (bool batch_major : {false, true}) {
      std::vector<uint8_t> fast(src.size(), 0xAA), ref(src.size(), 0x55);
      ReverseSequence(src.data(), batch, steps, inner, batch_major, lens, es, fast.data());
      reference::ReverseSequence(src.data(), batch, steps, inner, batch_major, lens, es,
                                 ref.data());
      EXPECT_EQ(fast, ref) << "trial " << trial << " batch_major " << batch_major;
    }
  }
}

TEST(MovementKernels, TriluMatchesReference) {
  std::mt19937 rng(113);
  for (int trial = 0; trial < 400; ++trial) {
    const size_t es = RandomElemSize(&rng);
    const bool with_empty = trial % 9 == 0;
    const int64_t mats = with_empty ? Below(&rng, 2) : 1 + Below(&rng, 3);
    const int64_t rows = with_empty ? Below(&rng, 3) : 1 + Below(&rng, 6);
    const int64_t cols = with_empty ? Below(&rng, 3) : 1 + Below(&rng, 6);
    int64_t k = Below(&rng, 17) - 8;
    if (trial % 13 == 0) k = trial % 2 == 0 ? INT64_MAX : INT64_MIN;
    const std::vector<uint8_t> src =
        RandomBytes(&rng, mats * rows * cols * static_cast<int64_t>(es));
    for (bool upper : {false, true}) {
      std::vector<uint8_t> fast(src.size(), 0xAA), ref(src.size(), 0x55), in_place = src;
      Trilu(src.data(), mats, rows, cols, k, upper, es, fast.data());
      reference::Trilu(src.data(), mats, rows, cols, k, upper, es, ref.data());
      EXPECT_EQ(fast, ref) << "trial " << trial << " k " << k << " upper " << upper;
      Trilu(in_place.data(), mats, rows, cols, k, upper, es, in_place.data());
      EXPECT_EQ(in_place, ref) << "in place, trial " << trial;
    }
  }
}

// The references on hand-worked cases.
TEST(MovementKernels, ReferencesByHand) {
  const std::vector<uint8_t> a = {1, 2, 3, 4}, b = {5, 6};
  std::vector<uint8_t> cat(6);
  const void* parts[] = {a.data(), b.data()};
  reference::ConcatBlocks(parts, std::vector<int64_t>{2, 1}, 2, 1, cat.data());
  EXPECT_EQ(cat, (std::vector<uint8_t>{1, 2, 5, 3, 4, 6}));
  // Time-major [steps 3, batch 2]: batch 0 reversed over 3 steps, batch 1 over 2.
  const std::vector<uint8_t> seq = {1, 10, 2, 20, 3, 30};
  std::vector<uint8_t> rev(6);
  reference::ReverseSequence(seq.data(), 2, 3, 1, false, std::vector<int64_t>{3, 2}, 1, rev.data());
  EXPECT_EQ(rev, (std::vector<uint8_t>{3, 20, 2, 10, 1, 30}));
  const std::vector<uint8_t> m = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<uint8_t> upper(9);
  reference::Trilu(m.data(), 1, 3, 3, 0, true, 1, upper.data());
  EXPECT_EQ(upper, (std::vector<uint8_t>{1, 2, 3, 0, 5, 6, 0, 0, 9}));
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels::kernel_test
