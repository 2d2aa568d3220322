// MatMul, Gemm, MatMulInteger, Einsum and Det: the BLAS GEMM against the reference triple loop
// on random shapes, and ops against hand-computed values.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/matmul_fast.h"
#include "runtime/kernels/reference/gemm.h"
#include "runtime/thread_pool.h"
#include "tests/unit/runtime/ops_harness.h"

namespace onnx_bcast::runtime {
namespace {

using testing::FloatAttr;
using testing::IntAttr;
using testing::MakeNode;
using testing::RunNode;
using testing::StringAttr;

TEST(GemmKernel, BlasMatchesReferenceOnRandomShapes) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int iter = 0; iter < 200; ++iter) {
    const int64_t m = rng() % 9, n = rng() % 9, k = rng() % 9;
    const bool ta = rng() & 1, tb = rng() & 1;
    const float alpha = (rng() & 1) ? 1.0f : 0.5f, beta = (rng() % 3) * 0.5f;
    std::vector<float> a(m * k), b(k * n), c(m * n), ref;
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
    for (float& v : c) v = dist(rng);
    ref = c;
    const int64_t lda = ta ? m : k, ldb = tb ? k : n;
    kernels::Gemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), n);
    kernels::reference::Gemm<float>(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta,
                                    ref.data(), n);
    for (int64_t i = 0; i < m * n; ++i) EXPECT_NEAR(c[i], ref[i], 1e-5) << iter;
  }
}

// With beta == 0, C's old contents are never read: NaN and infinity there (a reused buffer)
// leave no trace, on OpenBLAS's small-matrix kernels and its large ones, in float and double.
TEST(GemmKernel, BetaZeroNeverReadsC) {
  std::mt19937_64 rng(1129);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (const int64_t size : {2, 7, 64, 200}) {
    const int64_t m = size, n = size + 3, k = size + 1;
    std::vector<double> a(m * k), b(k * n), ref(m * n, 0.0);
    for (double& v : a) v = dist(rng);
    for (double& v : b) v = dist(rng);
    kernels::reference::Gemm<double>(false, false, m, n, k, 1.0, a.data(), k, b.data(), n, 0.0,
                                     ref.data(), n);
    std::vector<double> cd(m * n);
    for (size_t i = 0; i < cd.size(); ++i) cd[i] = i % 2 ? std::nan("") : HUGE_VAL;
    kernels::Gemm(false, false, m, n, k, 1.0, a.data(), k, b.data(), n, 0.0, cd.data(), n);
    const std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
    std::vector<float> cf(m * n);
    for (size_t i = 0; i < cf.size(); ++i) cf[i] = i % 2 ? std::nanf("") : HUGE_VALF;
    kernels::Gemm(false, false, m, n, k, 1.0f, af.data(), k, bf.data(), n, 0.0f, cf.data(), n);
    for (int64_t i = 0; i < m * n; ++i) {
      ASSERT_NEAR(cd[i], ref[i], 1e-9) << size << " at " << i;
      ASSERT_NEAR(cf[i], ref[i], 1e-4) << size << " at " << i;
    }
  }
}

// BatchedMatMul against one reference product per batch, on seeded shapes where the batches
// share b with a packed (taken as a single product), share b with a gap in a, or do not share.
TEST(GemmKernel, BatchedMatMulMatchesPerBatchReference) {
  std::mt19937_64 rng(24);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int iter = 0; iter < 150; ++iter) {
    const int64_t batch = rng() % 6 + 1, m = rng() % 7 + 1, n = rng() % 7 + 1, k = rng() % 7 + 1;
    const int layout = iter % 3;  // 0: shared b, packed a; 1: shared b, a gapped; 2: own b
    const int64_t a_step = m * k + (layout == 1 ? 3 : 0);
    std::vector<float> a(batch * a_step + 5), b(batch * k * n + 2);
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
    std::vector<int64_t> a_off(batch), b_off(batch);
    const int64_t a0 = rng() % 5, b0 = rng() % 2;
    for (int64_t i = 0; i < batch; ++i) {
      a_off[i] = a0 + i * a_step;
      b_off[i] = b0 + (layout == 2 ? i * k * n : 0);
    }
    std::vector<float> out(batch * m * n), ref(out.size());
    kernels::BatchedMatMul<float>(batch, m, n, k, a.data(), a_off.data(), b.data(), b_off.data(),
                                  out.data());
    for (int64_t i = 0; i < batch; ++i) {
      kernels::reference::Gemm<float>(false, false, m, n, k, 1.0, a.data() + a_off[i], k,
                                      b.data() + b_off[i], n, 0.0, ref.data() + i * m * n, n);
    }
    for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], ref[i], 1e-5) << iter;
  }
}

// The register-blocked small products against the reference, on seeded shapes with every
// n from 1 to 64 (full 8-column blocks and masked tails), k from 0, and gapped, shared or own
// operands per product.
TEST(GemmKernel, SmallMatMulsMatchReference) {
  if (!kernels::SmallMatMulAvailable()) GTEST_SKIP() << "no AVX2+FMA";
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int iter = 0; iter < 200; ++iter) {
    const int64_t n = iter % kernels::kSmallMatMulMaxDim + 1;
    const int64_t m = rng() % kernels::kSmallMatMulMaxDim + 1;
    const int64_t k = iter < 64 ? static_cast<int64_t>(rng() % 20) : rng() % 64 + 1;
    const int64_t batch = rng() % 4 + 1;
    const bool share_b = rng() & 1;
    const int64_t a_step = m * k + static_cast<int64_t>(rng() % 3);
    std::vector<float> a(batch * a_step + 1), b(batch * k * n + 1);
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
    std::vector<int64_t> a_off(batch), b_off(batch);
    for (int64_t i = 0; i < batch; ++i) {
      a_off[i] = 1 + i * a_step;
      b_off[i] = share_b ? 0 : i * k * n;
    }
    std::vector<float> out(batch * m * n, 99.0f), ref(out.size());
    ASSERT_TRUE(kernels::SmallMatMuls(batch, m, n, k, a.data(), a_off.data(), b.data(),
                                      b_off.data(), out.data()));
    for (int64_t i = 0; i < batch; ++i) {
      kernels::reference::Gemm<float>(false, false, m, n, k, 1.0, a.data() + a_off[i], k,
                                      b.data() + b_off[i], n, 0.0, ref.data() + i * m * n, n);
    }
    for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], ref[i], 1e-5) << iter << " " << i;
  }
  EXPECT_FALSE(kernels::SmallMatMuls(1, 65, 1, 1, nullptr, nullptr, nullptr, nullptr, nullptr));
}

// oneDNN's matmul (one product, the large-product path of BatchedMatMul) against the reference.
TEST(GemmKernel, OneDnnMatMulMatchesReference) {
  if (!kernels::OneDnnMatMulAvailable()) GTEST_SKIP() << "built without oneDNN";
  std::mt19937_64 rng(77);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int iter = 0; iter < 40; ++iter) {
    const int64_t m = rng() % 300 + 1, n = rng() % 130 + 1, k = rng() % 130 + 1;
    std::vector<float> a(m * k), b(k * n), out(m * n), ref(m * n);
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
    ASSERT_TRUE(kernels::OneDnnMatMul(m, n, k, a.data(), b.data(), out.data()));
    kernels::reference::Gemm<float>(false, false, m, n, k, 1.0, a.data(), k, b.data(), n, 0.0,
                                    ref.data(), n);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], ref[i], 1e-4) << iter;
  }
}

TEST(GemmKernel, ScaledInt64SaturatesAtTwoToThe63) {
  // 2 * 2^62 is 2^63 exactly, one past INT64_MAX (the double bound the result was clamped to,
  // so the cast to int64 was out of range).
  const int64_t a = int64_t{1} << 62, b = 1;
  int64_t c = 0;
  kernels::GemmLoops<int64_t>(false, false, 1, 1, 1, 2.0, &a, 1, &b, 1, 0.0, &c, 1);
  EXPECT_EQ(c, std::numeric_limits<int64_t>::max());
  const uint64_t ua = uint64_t{1} << 63, ub = 1;
  uint64_t uc = 0;
  kernels::GemmLoops<uint64_t>(false, false, 1, 1, 1, 2.0, &ua, 1, &ub, 1, 0.0, &uc, 1);
  EXPECT_EQ(uc, std::numeric_limits<uint64_t>::max());
}

TEST(GemmKernel, IntegerLoopsMatchReference) {
  std::mt19937_64 rng(5);
  for (int iter = 0; iter < 50; ++iter) {
    const int64_t m = rng() % 6 + 1, n = rng() % 6 + 1, k = rng() % 6 + 1;
    std::vector<int32_t> a(m * k), b(k * n), c(m * n), ref(m * n);
    for (int32_t& v : a) v = static_cast<int32_t>(rng() % 21) - 10;
    for (int32_t& v : b) v = static_cast<int32_t>(rng() % 21) - 10;
    kernels::GemmLoops<int32_t>(false, false, m, n, k, 1, a.data(), k, b.data(), n, 0, c.data(), n);
    kernels::reference::Gemm<int32_t>(false, false, m, n, k, 1, a.data(), k, b.data(), n, 0,
                                      ref.data(), n);
    EXPECT_EQ(c, ref);
  }
}

Tensor Floats(std::vector<int64_t> shape, std::vector<float> v) {
  return *Tensor::FromValues<float>(std::move(shape), absl::Span<const float>(v));
}

TEST(MatMulOp, BatchBroadcastAndVectorPromotion) {
  Node node = MakeNode("MatMul", 2, 1, 13);
  // [2,1,2] x [2] -> [2,1].
  Tensor a = Floats({2, 1, 2}, {1, 2, 3, 4});
  Tensor v = Floats({2}, {1, 1});
  auto out = RunNode(node, {&a, &v});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ((*out)[0].tensor->data<float>()[1], 7);
  // [1,2,2] x [3,2,1] -> [3,2,1] (a broadcast over b's batch).
  Tensor a2 = Floats({1, 2, 2}, {1, 0, 0, 2});
  Tensor b2 = Floats({3, 2, 1}, {1, 1, 2, 2, 3, 3});
  out = RunNode(node, {&a2, &b2});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->shape(), (std::vector<int64_t>{3, 2, 1}));
  const std::vector<float> want = {1, 2, 2, 4, 3, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ((*out)[0].tensor->data<float>()[i], want[i]);
}

TEST(MatMulOp, MismatchedKIsAnError) {
  Node node = MakeNode("MatMul", 2, 1, 13);
  Tensor a = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = Floats({2, 2}, {1, 2, 3, 4});
  auto out = RunNode(node, {&a, &b});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MatMulOp, Int64UsesLoops) {
  Node node = MakeNode("MatMul", 2, 1, 13);
  Tensor a = *Tensor::FromValues<int64_t>({1, 2}, {3, 4});
  Tensor b = *Tensor::FromValues<int64_t>({2, 1}, {5, 6});
  auto out = RunNode(node, {&a, &b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->data<int64_t>()[0], 39);
}

// Products split over a two-thread pool (the run's threads; OpenBLAS itself stays on one):
// one large product by rows, several by batch, and the Gemm op by rows of op(A) with
// transposes and C, against the reference and bit for bit against one thread (each part is
// at least 2^21 multiply-adds, so it takes the whole product's path). The pool must have
// taken the work.
TEST(GemmKernel, SplitProductsMatchReference) {
  ThreadPool pool(2);
  const kernels::ParallelFor parallel = testing::PoolParallel(&pool);
  std::mt19937_64 rng(4647);
  for (const int64_t batch : {1, 3}) {
    const int64_t m = 200 + rng() % 40, n = 100 + rng() % 20, k = 250 + rng() % 30;
    std::vector<float> a = testing::RandomFloats(rng, batch * m * k);
    std::vector<float> b = testing::RandomFloats(rng, batch * k * n);
    std::vector<int64_t> a_off(batch), b_off(batch);
    for (int64_t i = 0; i < batch; ++i) {
      a_off[i] = i * m * k;
      b_off[i] = i * k * n;
    }
    std::vector<float> out(batch * m * n, std::nanf("")), ref(out.size());
    const int64_t before = pool.handoffs();
    kernels::BatchedMatMul<float>(batch, m, n, k, a.data(), a_off.data(), b.data(), b_off.data(),
                                  out.data(), &parallel);
    EXPECT_GT(pool.handoffs(), before) << "batch " << batch << ": not split";
    std::vector<float> whole(out.size());
    kernels::BatchedMatMul<float>(batch, m, n, k, a.data(), a_off.data(), b.data(), b_off.data(),
                                  whole.data());
    testing::ExpectSameBits(out.data(), whole.data(), static_cast<int64_t>(out.size()),
                            "split against one thread");
    for (int64_t i = 0; i < batch; ++i) {
      kernels::reference::Gemm<float>(false, false, m, n, k, 1.0, a.data() + a_off[i], k,
                                      b.data() + b_off[i], n, 0.0, ref.data() + i * m * n, n);
    }
    for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], ref[i], 1e-4) << batch << " " << i;
  }
  for (const bool ta : {false, true}) {
    const int64_t m = 256, n = 96, k = 256;
    Node node = MakeNode("Gemm", 3, 1, 13);
    node.attrs["transA"] = IntAttr(ta ? 1 : 0);
    node.attrs["beta"] = FloatAttr(0.5f);
    std::vector<float> av = testing::RandomFloats(rng, m * k),
                       bv = testing::RandomFloats(rng, k * n);
    std::vector<float> cv = testing::RandomFloats(rng, n);
    Tensor a = Floats(ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, av);
    Tensor b = Floats({k, n}, bv);
    Tensor c = Floats({n}, cv);
    RunOptions options;
    options.pool = &pool;
    options.threads = 2;
    const int64_t before = pool.handoffs();
    auto out = RunNode(node, {&a, &b, &c}, options);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_GT(pool.handoffs(), before) << "Gemm not split";
    std::vector<float> ref(m * n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) ref[i * n + j] = 0.5f * cv[j];
    }
    kernels::reference::Gemm<float>(ta, false, m, n, k, 1.0, av.data(), ta ? m : k, bv.data(), n,
                                    1.0, ref.data(), n);
    const float* got = (*out)[0].tensor->data<float>();
    auto one_thread = RunNode(node, {&a, &b, &c});
    ASSERT_TRUE(one_thread.ok()) << one_thread.status();
    testing::ExpectSameBits(got, (*one_thread)[0].tensor->data<float>(), m * n,
                            "Gemm split against one thread");
    for (int64_t i = 0; i < m * n; ++i)
      ASSERT_NEAR(got[i], ref[i], 1e-4) << "transA " << ta << " " << i;
  }
}

TEST(GemmOp, TransposesAlphaBetaAndRowBias) {
  Node node = MakeNode("Gemm", 3, 1, 13);
  node.attrs["transA"] = IntAttr(1);
  node.attrs["alpha"] = FloatAttr(2);
  node.attrs["beta"] = FloatAttr(0.5f);
  Tensor a = Floats({2, 1}, {1, 2});  // A^T = [1, 2]
  Tensor b = Floats({2, 2}, {1, 0, 0, 1});
  Tensor c = Floats({2}, {10, 20});
  auto out = RunNode(node, {&a, &b, &c});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->data<float>()[0], 2 * 1 + 5);
  EXPECT_EQ((*out)[0].tensor->data<float>()[1], 2 * 2 + 10);
}

TEST(GemmOp, CThatDoesNotBroadcastIsAnError) {
  Node node = MakeNode("Gemm", 3, 1, 13);
  Tensor a = Floats({2, 2}, {1, 2, 3, 4});
  Tensor c = Floats({3}, {1, 2, 3});
  auto out = RunNode(node, {&a, &a, &c});
  ASSERT_FALSE(out.ok());
}

TEST(MatMulIntegerOp, ZeroPointsAreSubtracted) {
  Node node = MakeNode("MatMulInteger", 4, 1, 10);
  Tensor a = *Tensor::FromValues<uint8_t>({1, 2}, {3, 4});
  Tensor b = *Tensor::FromValues<uint8_t>({2, 1}, {5, 6});
  Tensor az = *Tensor::FromValues<uint8_t>({}, {1});
  Tensor bz = *Tensor::FromValues<uint8_t>({}, {2});
  auto out = RunNode(node, {&a, &b, &az, &bz});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->data<int32_t>()[0], 2 * 3 + 3 * 4);
}

TEST(EinsumOp, TransposeBatchMatMulTraceAndImplicitOutput) {
  Node node = MakeNode("Einsum", 2, 1, 12);
  node.attrs["equation"] = StringAttr("...ij,...jk->...ik");
  Tensor a = Floats({1, 2, 2}, {1, 2, 3, 4});
  Tensor b = Floats({2, 1}, {1, 1});
  auto out = RunNode(node, {&a, &b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->shape(), (std::vector<int64_t>{1, 2, 1}));
  EXPECT_EQ((*out)[0].tensor->data<float>()[1], 7);
  Node trace = MakeNode("Einsum", 1, 1, 12);
  trace.attrs["equation"] = StringAttr("ii");
  Tensor sq = Floats({2, 2}, {1, 2, 3, 4});
  out = RunNode(trace, {&sq});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->rank(), 0);
  EXPECT_EQ((*out)[0].tensor->data<float>()[0], 5);
  Node transpose = MakeNode("Einsum", 1, 1, 12);
  transpose.attrs["equation"] = StringAttr("ji");  // implicit output "ij"
  out = RunNode(transpose, {&sq});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->data<float>()[1], 3);
}

TEST(DetOp, BatchOfMatrices) {
  Node node = MakeNode("Det", 1, 1, 11);
  Tensor x = Floats({2, 2, 2}, {1, 2, 3, 4, 2, 0, 0, 3});
  auto out = RunNode(node, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].tensor->data<float>()[0], -2, 1e-6);
  EXPECT_NEAR((*out)[0].tensor->data<float>()[1], 6, 1e-6);
}

}  // namespace
}  // namespace onnx_bcast::runtime

namespace onnx_bcast::runtime {
namespace {

TEST(QLinearMatMulOp, RequantizesWithZeroPointAndSaturates) {
  Node node = testing::MakeNode("QLinearMatMul", 8, 1, 10);
  Tensor a = *Tensor::FromValues<uint8_t>({1, 2}, {2, 4});
  Tensor a_scale = *Tensor::FromValues<float>({}, {0.5f});
  Tensor zp0 = *Tensor::FromValues<uint8_t>({}, {0});
  Tensor b = *Tensor::FromValues<uint8_t>({2, 2}, {1, 100, 1, 100});
  Tensor one = *Tensor::FromValues<float>({}, {1});
  Tensor y_zp = *Tensor::FromValues<uint8_t>({}, {10});
  auto out = testing::RunNode(node, {&a, &a_scale, &zp0, &b, &one, &zp0, &one, &y_zp});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->data<uint8_t>()[0], 13);   // 6 * 0.5 + 10
  EXPECT_EQ((*out)[0].tensor->data<uint8_t>()[1], 255);  // 300 + 10 saturates
}

}  // namespace
}  // namespace onnx_bcast::runtime
