// kernels/einsum.h against reference/einsum.h on seeded random contractions: 1-3 operands,
// 0-4 loop labels with extents 0-3, repeated labels (diagonals), broadcast dims (stride 0),
// float and wrapping int64.
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/einsum.h"
#include "runtime/kernels/reference/einsum.h"
#include "tests/unit/runtime/kernel_random_util.h"

namespace onnx_bcast::runtime::kernels {
namespace {

int64_t Below(std::mt19937* rng, int64_t n) { return static_cast<int64_t>((*rng)() % n); }

// A contraction as the op lays it out: loop extents, each operand's element count and
// strides per label, the output (dense over the first `out_rank` labels) last.
struct Contraction {
  std::vector<int64_t> dims;
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> strides;
  int64_t out_count = 1;
};

Contraction RandomContraction(std::mt19937* rng, int trial) {
  Contraction c;
  const int64_t rank = trial == 0 ? 4 : Below(rng, 5);
  for (int64_t l = 0; l < rank; ++l)
    c.dims.push_back(trial % 9 == 8 ? Below(rng, 4) : 1 + Below(rng, 3));
  if (trial == 0) c.dims = {6, 5, 7, 8};  // a larger case
  const int64_t operands = 1 + Below(rng, 3);
  for (int64_t t = 0; t < operands; ++t) {
    // A term of labels (repeats allowed: a diagonal); a dim may be 1 (broadcast, stride 0).
    std::vector<int64_t> term, shape;
    for (int64_t k = rank > 0 ? Below(rng, 4) : 0; k > 0; --k) {
      term.push_back(Below(rng, rank));
      shape.push_back(Below(rng, 4) == 0 ? 1 : c.dims[term.back()]);
    }
    std::vector<int64_t> s(rank, 0);
    int64_t stride = 1;
    for (size_t d = term.size(); d-- > 0;) {
      if (shape[d] != 1) s[term[d]] += stride;
      stride *= shape[d];
    }
    c.sizes.push_back(stride);
    c.strides.push_back(s);
  }
  const int64_t out_rank = Below(rng, rank + 1);
  std::vector<int64_t> out(rank, 0);
  for (int64_t l = out_rank; l-- > 0;) {
    out[l] = c.out_count;
    c.out_count *= c.dims[l];
  }
  c.strides.push_back(out);
  return c;
}

template <class T>
void CheckContraction(std::mt19937* rng, int trial) {
  const Contraction c = RandomContraction(rng, trial);
  std::vector<std::vector<T>> values;
  std::vector<const T*> operands;
  values.reserve(c.sizes.size());
  for (int64_t n : c.sizes) {
    std::vector<T>& v = values.emplace_back(static_cast<size_t>(n));
    for (T& x : v) {
      if constexpr (std::is_floating_point_v<T>) {
        x = std::uniform_real_distribution<T>(-2, 2)(*rng);
      } else {
        x = static_cast<T>((static_cast<uint64_t>((*rng)()) << 32) | (*rng)());  // wraps
      }
    }
    operands.push_back(v.data());
  }
  std::vector<EinsumAcc<T>> fast(c.out_count, 7), ref(c.out_count, 9);  // both must be reset
  EinsumContract<T>(operands, c.strides, c.dims, c.out_count, fast.data());
  reference::EinsumContract<T>(operands, c.strides, c.dims, c.out_count, ref.data());
  // Same points in the same order: float sums agree bit for bit.
  EXPECT_EQ(fast, ref) << "trial " << trial;
}

TEST(EinsumKernels, ContractionMatchesReference) {
  kernel_test::ForEachTrial<float, double, int64_t>(
      51, 300, []<class T>(std::mt19937* rng, int trial) { CheckContraction<T>(rng, trial); });
}

// The reference on a hand-worked case: "ij,jk->ik" with i=1, j=2, k=2 is a row times a matrix.
TEST(EinsumKernels, ReferenceMatMulByHand) {
  const std::vector<float> a = {1, 2}, b = {3, 4, 5, 6};
  const std::vector<const float*> operands = {a.data(), b.data()};
  // Loop labels i, k (output), j (summed).
  const std::vector<std::vector<int64_t>> strides = {{2, 0, 1}, {0, 1, 2}, {2, 1, 0}};
  std::vector<double> acc(2);
  reference::EinsumContract<float>(operands, strides, std::vector<int64_t>{1, 2, 2}, 2, acc.data());
  EXPECT_EQ(acc, (std::vector<double>{13, 16}));
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels
