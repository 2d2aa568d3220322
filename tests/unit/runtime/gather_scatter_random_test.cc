// kernels/gather_scatter.h against reference/gather_scatter.h on seeded random shapes: ranks
// 1-4 with empty and size-1 dims, every axis, repeated indices (so update order matters), every
// reduction and several element types (wrapping integers, float16 through float, bool).
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/dtype.h"
#include "runtime/kernels/gather_scatter.h"
#include "runtime/kernels/reference/gather_scatter.h"
#include "tests/unit/runtime/kernel_random_util.h"

namespace onnx_bcast::runtime::kernels::kernel_test {
namespace {

constexpr ScatterReduction kReductions[] = {ScatterReduction::kNone, ScatterReduction::kAdd,
                                            ScatterReduction::kMul, ScatterReduction::kMax,
                                            ScatterReduction::kMin};

// A data shape, an axis and an index shape that GatherElements accepts: off the axis the index
// dims are at most the data's; indices exist only when the axis has somewhere to point.
struct AxisCase {
  std::vector<int64_t> data_shape, index_shape;
  int64_t axis;
  std::vector<int64_t> indices;
};

AxisCase RandomAxisCase(std::mt19937* rng, int trial) {
  AxisCase c;
  const int64_t rank = 1 + Below(rng, 4);
  for (int64_t j = 0; j < rank; ++j) c.data_shape.push_back(Below(rng, 5));  // 0..4
  if (trial % 4 != 0) {  // mostly non-empty data
    for (int64_t& d : c.data_shape) d = std::max<int64_t>(d, 1);
  }
  c.axis = Below(rng, rank);
  for (int64_t j = 0; j < rank; ++j) {
    c.index_shape.push_back(j == c.axis ? Below(rng, 7) : Below(rng, c.data_shape[j] + 1));
  }
  if (c.data_shape[c.axis] == 0) c.index_shape[c.axis] = 0;
  if (trial == 0) c = {{64, 48, 32}, {64, 40, 32}, 1, {}};  // a large case
  c.indices.resize(static_cast<size_t>(Count(c.index_shape)));
  for (int64_t& i : c.indices) i = Below(rng, c.data_shape[c.axis]);  // repeats likely
  return c;
}

template <class T>
void CheckAxisKernels(std::mt19937* rng, int trial) {
  const AxisCase c = RandomAxisCase(rng, trial);
  const Buffer<T> data = RandomValues<T>(rng, Count(c.data_shape));
  const Buffer<T> updates = RandomValues<T>(rng, Count(c.index_shape));
  Buffer<T> fast(updates.size()), ref(updates.size());
  GatherElements(Ptr<T>(data), c.data_shape, c.index_shape, c.axis, c.indices.data(), Ptr<T>(fast));
  reference::GatherElements(Ptr<T>(data), c.data_shape, c.index_shape, c.axis, c.indices.data(),
                            Ptr<T>(ref));
  EXPECT_TRUE(SameBits(fast, ref)) << "GatherElements trial " << trial;
  for (ScatterReduction r : kReductions) {
    Buffer<T> fast_out = data, ref_out = data;
    ScatterElements(Ptr<T>(fast_out), c.data_shape, c.index_shape, c.axis, c.indices.data(),
                    Ptr<T>(updates), r);
    reference::ScatterElements(Ptr<T>(ref_out), c.data_shape, c.index_shape, c.axis,
                               c.indices.data(), Ptr<T>(updates), r);
    EXPECT_TRUE(SameBits(fast_out, ref_out))
        << "ScatterElements trial " << trial << " reduction " << static_cast<int>(r);
  }
}

template <class T>
void CheckScatterND(std::mt19937* rng, int trial) {
  const int64_t rank = 1 + Below(rng, 4);
  std::vector<int64_t> data_shape;
  for (int64_t j = 0; j < rank; ++j) data_shape.push_back(1 + Below(rng, 4));
  const int64_t tuple_len = Below(rng, rank + 1);  // 0: every tuple addresses all of data
  if (trial % 5 == 0) data_shape[rank - 1] = tuple_len < rank ? 0 : data_shape[rank - 1];
  if (trial == 0) data_shape = {32, 64, 128};  // a large case
  const int64_t tuples = trial % 7 == 0 ? 0 : Below(rng, 9);
  std::vector<int64_t> indices(static_cast<size_t>(tuples * tuple_len));
  for (size_t k = 0; k < indices.size(); ++k) {
    indices[k] = Below(rng, data_shape[k % tuple_len]);  // repeats likely
  }
  int64_t block = 1;
  for (int64_t j = tuple_len; j < rank; ++j) block *= data_shape[j];
  const Buffer<T> data = RandomValues<T>(rng, Count(data_shape));
  const Buffer<T> updates = RandomValues<T>(rng, tuples * block);
  for (ScatterReduction r : kReductions) {
    Buffer<T> fast = data, ref = data;
    ScatterND(Ptr<T>(fast), data_shape, tuples, tuple_len, indices.data(), Ptr<T>(updates), r);
    reference::ScatterND(Ptr<T>(ref), data_shape, tuples, tuple_len, indices.data(),
                         Ptr<T>(updates), r);
    EXPECT_TRUE(SameBits(fast, ref))
        << "ScatterND trial " << trial << " reduction " << static_cast<int>(r);
  }
}

TEST(GatherScatterKernels, MatchReferenceOnEveryElementType) {
  std::mt19937 rng(31);
  for (int trial = 0; trial < 200; ++trial) {
    auto check = [&](auto tag) {
      using T = typename decltype(tag)::type;
      CheckAxisKernels<T>(&rng, trial);
      CheckScatterND<T>(&rng, trial);
    };
    check(TypeTag<float>{});
    check(TypeTag<double>{});
    check(TypeTag<Float16>{});
    check(TypeTag<BFloat16>{});
    check(TypeTag<int8_t>{});
    check(TypeTag<uint16_t>{});
    check(TypeTag<int32_t>{});
    check(TypeTag<int64_t>{});
    check(TypeTag<bool>{});
  }
}

// The reference itself, on a case small enough to work out by hand: repeated indices combine
// in order (the last write wins without a reduction).
TEST(GatherScatterKernels, ReferenceScatterByHand) {
  const std::vector<int64_t> shape = {1, 3}, index_shape = {1, 3};
  const std::vector<int64_t> indices = {2, 0, 2};
  const std::vector<float> updates = {5, 7, 11};
  std::vector<float> none = {1, 2, 3}, add = none, mul = none;
  reference::ScatterElements(none.data(), shape, index_shape, 1, indices.data(), updates.data(),
                             ScatterReduction::kNone);
  reference::ScatterElements(add.data(), shape, index_shape, 1, indices.data(), updates.data(),
                             ScatterReduction::kAdd);
  reference::ScatterElements(mul.data(), shape, index_shape, 1, indices.data(), updates.data(),
                             ScatterReduction::kMul);
  EXPECT_EQ(none, (std::vector<float>{7, 2, 11}));
  EXPECT_EQ(add, (std::vector<float>{8, 2, 19}));
  EXPECT_EQ(mul, (std::vector<float>{7, 2, 165}));
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels::kernel_test
