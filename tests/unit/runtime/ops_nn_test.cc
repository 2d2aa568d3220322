// Conv, ConvTranspose, pooling, normalizations and Resize: im2col/col2im convolutions and the
// separable resampler against direct reference kernels on random geometries, and ops against
// hand-computed values.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/conv.h"
#include "runtime/kernels/pool.h"
#include "runtime/kernels/pool_simd.h"
#include "runtime/kernels/reference/conv.h"
#include "runtime/kernels/reference/pool.h"
#include "runtime/kernels/reference/resize.h"
#include "runtime/kernels/resize.h"
#include "runtime/thread_pool.h"
#include "tests/unit/runtime/ops_harness.h"

namespace onnx_bcast::runtime {
namespace {

using testing::AddAxis;
using testing::FloatAttr;
using testing::IntAttr;
using testing::IntsAttr;
using testing::MakeNode;
using testing::PoolParallel;
using testing::RandomFloats;
using testing::RunNode;
using testing::StringAttr;

// A random geometry of `rank` spatial dims; `transposed` fills `out` from the transposed
// formula instead of the forward one.
kernels::WindowGeometry RandomGeometry(std::mt19937_64& rng, int rank, bool transposed) {
  kernels::WindowGeometry g;
  for (int d = 0; d < rank; ++d) {
    const int64_t k = rng() % 3 + 1, s = rng() % 2 + 1, dl = rng() % 2 + 1;
    const int64_t ek = (k - 1) * dl + 1;
    const int64_t pb = rng() % 2, pe = rng() % 2, in = rng() % 4 + ek + 1;
    AddAxis(&g, in, k, s, dl, pb, pe,
            transposed ? s * (in - 1) + ek - pb - pe : (in + pb + pe - ek) / s + 1);
  }
  return g;
}

// The fast kernel against the reference on 120 random grouped geometries of ranks 1-3, every
// other one with a bias: Conv, or with `transposed` ConvTranspose.
void ExpectConvMatchesReference(uint64_t seed, bool transposed) {
  std::mt19937_64 rng(seed);
  for (int iter = 0; iter < 120; ++iter) {
    const int rank = iter % 3 + 1;
    const kernels::WindowGeometry g = RandomGeometry(rng, rank, transposed);
    const int64_t group = rng() % 2 + 1, n = rng() % 2 + 1;
    const int64_t c = group * (rng() % 2 + 1), m = group * (rng() % 3 + 1);
    const std::vector<float> x = RandomFloats(rng, n * c * g.in_size());
    // m * (c / group) kernels forward, c * (m / group) transposed: the same count.
    const std::vector<float> w = RandomFloats(rng, m * (c / group) * g.kernel_size());
    const std::vector<float> b = RandomFloats(rng, m);
    std::vector<float> fast(n * m * g.out_size()), ref(fast.size());
    const float* bias = (iter & 1) ? b.data() : nullptr;
    if (transposed) {
      kernels::ConvTranspose<float>(g, n, c, m, group, x.data(), w.data(), bias, fast.data());
      kernels::reference::ConvTranspose<float>(g, n, c, m, group, x.data(), w.data(), bias,
                                               ref.data());
    } else {
      kernels::Conv<float>(g, n, c, m, group, x.data(), w.data(), bias, fast.data());
      kernels::reference::Conv<float>(g, n, c, m, group, x.data(), w.data(), bias, ref.data());
    }
    for (size_t i = 0; i < fast.size(); ++i) ASSERT_NEAR(fast[i], ref[i], 1e-4) << iter;
  }
}

TEST(ConvKernel, Im2colMatchesDirectOnRandomGeometries) { ExpectConvMatchesReference(1, false); }

// The depthwise paths (oneDNN through Conv, the direct loop through ConvNoOneDnn; 2-D, one
// input channel per group, channel multipliers 1-3) against the reference on random sizes,
// strides, dilations and pads (asymmetric, larger than the kernel's reach included).
TEST(ConvKernel, DepthwiseMatchesDirectOnRandomGeometries) {
  std::mt19937_64 rng(20261127);
  for (int trial = 0; trial < 300; ++trial) {
    kernels::WindowGeometry g;
    for (int d = 0; d < 2; ++d) {
      const int64_t k = rng() % 4 + 1, s = rng() % 3 + 1, dl = rng() % 2 + 1;
      const int64_t pb = rng() % 4, pe = rng() % 4;
      const int64_t in = rng() % 9 + 1;
      const int64_t span = (k - 1) * dl + 1;
      const int64_t padded = in + pb + pe;
      if (padded < span) {
        --d;  // no output: draw again
        continue;
      }
      AddAxis(&g, in, k, s, dl, pb, pe, (padded - span) / s + 1);
    }
    if (g.kernel_size() == 1) continue;  // the pointwise GEMM path
    const int64_t c = rng() % 5 + 2, mult = rng() % 3 + 1, n = rng() % 2 + 1;
    const int64_t m = c * mult;
    const std::vector<float> x = RandomFloats(rng, n * c * g.in_size());
    const std::vector<float> w = RandomFloats(rng, m * g.kernel_size());
    const std::vector<float> b = RandomFloats(rng, m);
    const float* bias = rng() % 2 ? b.data() : nullptr;
    std::vector<float> fast(n * m * g.out_size()), direct(fast.size()), ref(fast.size());
    kernels::Conv<float>(g, n, c, m, c, x.data(), w.data(), bias, fast.data());  // oneDNN
    kernels::ConvNoOneDnn<float>(g, n, c, m, c, x.data(), w.data(), bias, direct.data());
    kernels::reference::Conv<float>(g, n, c, m, c, x.data(), w.data(), bias, ref.data());
    for (size_t i = 0; i < fast.size(); ++i) {
      ASSERT_NEAR(fast[i], ref[i], 1e-4) << trial << " " << i;
      ASSERT_NEAR(direct[i], ref[i], 1e-4) << trial << " " << i;
    }
  }
}

// Random 2-D geometries for the general (non-depthwise) paths: kernels 1x1, 3x3 and 7x7 (plus
// odd rectangles), strides 1-3, dilations 1-2, asymmetric pads up to 3, groups 1-3. With
// `multi_band`, sizes where the banded im2col splits the output into several bands.
struct ConvCase {
  kernels::WindowGeometry g;
  int64_t n, c, m, group;
};

ConvCase RandomConv2D(std::mt19937_64& rng, bool multi_band) {
  static constexpr int64_t kKernels[] = {1, 3, 7, 1, 3, 2, 5};
  int64_t kh = kKernels[rng() % 7], kw = rng() % 4 == 0 ? kKernels[rng() % 7] : kh;
  if (multi_band) kh = kw = 3;
  ConvCase cc;
  kernels::WindowGeometry& g = cc.g;
  for (const int64_t k : {kh, kw}) {
    const int64_t s = rng() % 3 + 1, dl = rng() % 2 + 1;
    const int64_t pb = rng() % 4, pe = rng() % 4;
    const int64_t span = (k - 1) * dl + 1;
    const int64_t in =
        multi_band ? rng() % 20 + 40 : rng() % 12 + std::max<int64_t>(1, span - pb - pe);
    const int64_t stride = multi_band ? 1 : s;
    AddAxis(&g, in, k, stride, dl, pb, pe, (in + pb + pe - span) / stride + 1);
  }
  cc.group = rng() % 3 + 1;
  const int64_t cg = multi_band ? 16 : rng() % 6 + 1;
  cc.c = cc.group * cg;
  cc.m = cc.group * (multi_band ? 2 : rng() % 9 + 1);
  cc.n = rng() % 2 + 1;
  if (cc.c == cc.group && cc.group > 1 && g.kernel_size() > 1) cc.c *= 2;  // not depthwise
  return cc;
}

// Conv (oneDNN where the build has it and the geometry qualifies, one and two threads) and the
// banded im2col + OpenBLAS path (bands on a pool) against the reference kernel.
TEST(ConvKernel, Conv2DPathsMatchReferenceOnRandomGeometries) {
  std::mt19937_64 rng(20261127);
  ThreadPool pool(2);
  const kernels::ParallelFor parallel = PoolParallel(&pool);
  for (int trial = 0; trial < 206; ++trial) {
    const ConvCase cc = RandomConv2D(rng, trial >= 200);
    const kernels::WindowGeometry& g = cc.g;
    const std::vector<float> x = RandomFloats(rng, cc.n * cc.c * g.in_size());
    const std::vector<float> w = RandomFloats(rng, cc.m * (cc.c / cc.group) * g.kernel_size());
    const std::vector<float> b = RandomFloats(rng, cc.m);
    const float* bias = rng() % 2 ? b.data() : nullptr;
    std::vector<float> fast(cc.n * cc.m * g.out_size()), banded(fast.size()), ref(fast.size());
    kernels::Conv<float>(g, cc.n, cc.c, cc.m, cc.group, x.data(), w.data(), bias, fast.data(),
                         trial % 3 == 0 ? 2 : 1);
    kernels::ConvNoOneDnn<float>(g, cc.n, cc.c, cc.m, cc.group, x.data(), w.data(), bias,
                                 banded.data(), trial % 2 ? &parallel : nullptr);
    kernels::reference::Conv<float>(g, cc.n, cc.c, cc.m, cc.group, x.data(), w.data(), bias,
                                    ref.data());
    for (size_t i = 0; i < fast.size(); ++i) {
      ASSERT_NEAR(fast[i], ref[i], 2e-4) << trial << " " << i;
      ASSERT_NEAR(banded[i], ref[i], 2e-4) << trial << " " << i;
    }
  }
}

// Every prepared path (weights packed once, PrepareConv2D) and the rule's and the measured
// choice against the reference kernel, on the random geometries above plus small maps (at most
// kSmallMapMaxPixels outputs, where the small-map path applies) with many maps and channels;
// each prepared state runs twice, so a second Run on its packed weights is checked too.
TEST(ConvKernel, PreparedPathsMatchReferenceOnRandomGeometries) {
  std::mt19937_64 rng(20261128);
  ThreadPool pool(2);
  const kernels::ParallelFor parallel = PoolParallel(&pool);
  int small_maps = 0;
  std::map<std::string, int> onednn_labels;  // oneDNN's two source layouts, both checked
  for (int trial = 0; trial < 160; ++trial) {
    ConvCase cc = RandomConv2D(rng, false);
    if (trial % 2 == 0) {
      // A small map: 1-6 x 1-6 outputs of a 3x3 (dilated or not) with 8-80 maps.
      kernels::WindowGeometry& g = cc.g;
      for (int d = 0; d < 2; ++d) {
        g.kernel[d] = 3;
        g.strides[d] = rng() % 2 + 1;
        g.dilations[d] = rng() % 2 + 1;
        g.pads_begin[d] = g.pads_end[d] = g.dilations[d];
        g.in[d] = rng() % 6 + 1;
        g.out[d] = (g.in[d] + 2 * g.pads_begin[d] - 2 * g.dilations[d] - 1) / g.strides[d] + 1;
      }
      cc.group = rng() % 4 == 0 ? 2 : 1;
      cc.c = cc.group * (rng() % 24 + 1);
      cc.m = cc.group * (rng() % 40 + 4);
      if (cc.c == cc.group && cc.group > 1) cc.c *= 2;
    }
    const kernels::WindowGeometry& g = cc.g;
    if (g.out_size() <= kernels::kSmallMapMaxPixels) ++small_maps;
    const std::vector<float> x = RandomFloats(rng, cc.n * cc.c * g.in_size());
    const std::vector<float> w = RandomFloats(rng, cc.m * (cc.c / cc.group) * g.kernel_size());
    const std::vector<float> b = RandomFloats(rng, cc.m);
    const float* bias = rng() % 2 ? b.data() : nullptr;
    std::vector<float> ref(cc.n * cc.m * g.out_size());
    kernels::reference::Conv<float>(g, cc.n, cc.c, cc.m, cc.group, x.data(), w.data(), bias,
                                    ref.data());
    const kernels::ConvPath paths[] = {kernels::ConvPath::kOneDnn, kernels::ConvPath::kSmallMap,
                                       kernels::ConvPath::kBands};
    for (int variant = 0; variant < 5; ++variant) {
      std::unique_ptr<kernels::PreparedConv> p =
          variant < 3
              ? kernels::PrepareConv2D(g, cc.n, cc.c, cc.m, cc.group, w.data(), bias != nullptr,
                                       kernels::ConvChoice::kRule, &paths[variant])
              : kernels::PrepareConv2D(
                    g, cc.n, cc.c, cc.m, cc.group, w.data(), bias != nullptr,
                    variant == 3 ? kernels::ConvChoice::kRule : kernels::ConvChoice::kMeasure);
      if (p == nullptr) {
        // Only oneDNN may be absent, and the small-map path only applies to small maps.
        ASSERT_TRUE(variant == 0 || (variant == 1 && g.out_size() > kernels::kSmallMapMaxPixels))
            << trial << " " << variant;
        continue;
      }
      if (variant == 0) ++onednn_labels[p->label()];
      for (int rep = 0; rep < 2; ++rep) {
        std::vector<float> fast(ref.size(), std::nanf(""));
        ASSERT_TRUE(p->Run(x.data(), w.data(), bias, fast.data(), rep ? &parallel : nullptr));
        for (size_t i = 0; i < fast.size(); ++i) {
          ASSERT_NEAR(fast[i], ref[i], 2e-4)
              << trial << " " << kernels::ConvPathName(p->path()) << " " << rep << " " << i;
        }
      }
    }
  }
  EXPECT_GE(small_maps, 60);
  if (!onednn_labels.empty()) {  // the build has oneDNN
    EXPECT_GE(onednn_labels["onednn-nchw"], 20);
    EXPECT_GE(onednn_labels["onednn"], 20);
  }
}

// Convolutions of one band (small maps, many channels) on the banded path with a pool: the
// GEMM is split over slices of the maps (conv.cc, Conv2DBands), pointwise and 3x3, against the
// reference.
TEST(ConvKernel, OneBandSlicesMatchReference) {
  std::mt19937_64 rng(4647);
  ThreadPool pool(2);
  const kernels::ParallelFor parallel = PoolParallel(&pool);
  for (int trial = 0; trial < 12; ++trial) {
    kernels::WindowGeometry g;
    const bool pointwise = trial % 2 == 0;
    const int64_t side = rng() % 6 + 9;
    for (int d = 0; d < 2; ++d) {
      AddAxis(&g, side, pointwise ? 1 : 3, 1, 1, pointwise ? 0 : 1, pointwise ? 0 : 1, side);
    }
    const int64_t c = pointwise ? 256 + rng() % 64 : 128 + rng() % 32;
    const int64_t m = (trial % 4 < 2) ? 16 + rng() % 40 : 64 + rng() % 60;
    const std::vector<float> x = RandomFloats(rng, c * g.in_size());
    const std::vector<float> w = RandomFloats(rng, m * c * g.kernel_size());
    const std::vector<float> b = RandomFloats(rng, m);
    const float* bias = trial % 3 ? b.data() : nullptr;
    std::vector<float> fast(m * g.out_size(), std::nanf("")), ref(fast.size());
    kernels::ConvNoOneDnn<float>(g, 1, c, m, 1, x.data(), w.data(), bias, fast.data(), &parallel);
    kernels::reference::Conv<float>(g, 1, c, m, 1, x.data(), w.data(), bias, ref.data());
    for (size_t i = 0; i < fast.size(); ++i) ASSERT_NEAR(fast[i], ref[i], 1e-3) << trial << " " << i;
  }
}

// The small-map kernel in double (ConvOp's path for double weights on small maps) against the
// reference.
TEST(ConvKernel, SmallMapDoubleMatchesReference) {
  std::mt19937_64 rng(32);
  for (int trial = 0; trial < 40; ++trial) {
    kernels::WindowGeometry g;
    for (int d = 0; d < 2; ++d) {
      const int64_t in = rng() % 5 + 1;
      AddAxis(&g, in, 3, 1, 1, 1, 1, in);
    }
    const int64_t c = rng() % 9 + 1, m = rng() % 30 + 1;
    std::uniform_real_distribution<double> dist(-1, 1);
    std::vector<double> x(c * g.in_size()), w(m * c * 9), b(m);
    for (double& v : x) v = dist(rng);
    for (double& v : w) v = dist(rng);
    for (double& v : b) v = dist(rng);
    std::vector<double> fast(m * g.out_size()), ref(fast.size());
    kernels::ConvSmallMap<double>(g, 1, c, m, 1, x.data(), w.data(), b.data(), fast.data());
    kernels::reference::Conv<double>(g, 1, c, m, 1, x.data(), w.data(), b.data(), ref.data());
    for (size_t i = 0; i < fast.size(); ++i) ASSERT_NEAR(fast[i], ref[i], 1e-12) << trial;
  }
}

TEST(ConvKernel, ConvTransposeMatchesDirectOnRandomGeometries) {
  ExpectConvMatchesReference(2, true);
}

TEST(PoolKernel, MatchesReferenceOnRandomGeometriesForEveryKind) {
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = iter % 3 + 1;
    kernels::WindowGeometry g = RandomGeometry(rng, rank, false);
    for (int d = 0; d < rank; ++d) {
      // ceil_mode-like extra outputs whose windows run past the padded input.
      if (rng() % 3 == 0) ++g.out[d];
    }
    kernels::PoolOptions opt;
    opt.kind = static_cast<kernels::PoolKind>(iter % 3);
    opt.count_include_pad = rng() & 1;
    opt.column_major_indices = rng() & 1;
    opt.p = static_cast<double>(rng() % 3 + 1);
    opt.index_base = rng() % 2 == 0 ? 0 : static_cast<int64_t>(rng() % 5) * g.in_size();
    const int64_t planes = rng() % 3 + 1;
    const std::vector<float> x = RandomFloats(rng, planes * g.in_size());
    std::vector<float> fast(planes * g.out_size()), ref(fast.size());
    std::vector<int64_t> fast_idx(fast.size()), ref_idx(fast.size());
    kernels::Pool<float>(opt, g, planes, x.data(), fast.data(), fast_idx.data());
    kernels::reference::Pool<float>(opt, g, planes, x.data(), ref.data(), ref_idx.data());
    for (size_t i = 0; i < fast.size(); ++i) ASSERT_NEAR(fast[i], ref[i], 1e-5) << iter;
    if (opt.kind == kernels::PoolKind::kMax) {
      EXPECT_EQ(fast_idx, ref_idx) << iter;
    }
  }
}

// Global average pooling (window = the whole plane, ranks 1-3) has its own loop: each plane's
// sum in the same order as the general one (eight planes interleaved), so bit for bit the
// reference's result.
TEST(PoolKernel, GlobalAverageMatchesReferenceExactly) {
  std::mt19937_64 rng(20261127);
  for (int iter = 0; iter < 60; ++iter) {
    kernels::WindowGeometry g;
    for (int d = 0; d < iter % 3 + 1; ++d) {
      const int64_t in = rng() % 30 + 1;
      AddAxis(&g, in, in, 1, 1, 0, 0, 1);
    }
    kernels::PoolOptions opt;
    opt.kind = kernels::PoolKind::kAverage;
    // Up to 20 planes: the kernel sums eight at a time, then the rest one by one.
    const int64_t planes = rng() % 20 + 1;
    const std::vector<float> x = RandomFloats(rng, planes * g.in_size());
    std::vector<float> fast(planes), ref(planes);
    std::vector<int64_t> ref_idx(planes);
    kernels::Pool<float>(opt, g, planes, x.data(), fast.data(), nullptr);
    kernels::reference::Pool<float>(opt, g, planes, x.data(), ref.data(), ref_idx.data());
    EXPECT_EQ(fast, ref) << iter;
  }
}

template <class T>
void CheckIntegerMaxPool(std::mt19937_64& rng, int iter) {
  // 8-bit MaxPool runs on the integers themselves: the same as pooling them as floats.
  const int rank = iter % 3 + 1;
  kernels::WindowGeometry g = RandomGeometry(rng, rank, false);
  kernels::PoolOptions opt;
  opt.kind = kernels::PoolKind::kMax;
  opt.column_major_indices = rng() & 1;
  const int64_t planes = rng() % 3 + 1;
  std::vector<T> x(static_cast<size_t>(planes * g.in_size()));
  for (T& v : x) v = static_cast<T>(rng());
  const std::vector<float> xf(x.begin(), x.end());
  std::vector<T> y(planes * g.out_size());
  std::vector<float> yf(y.size()), ref(y.size());
  std::vector<int64_t> idx(y.size()), idx_ref(y.size());
  const bool with_indices = rng() & 1;
  kernels::Pool<T>(opt, g, planes, x.data(), y.data(), with_indices ? idx.data() : nullptr);
  kernels::Pool<float>(opt, g, planes, xf.data(), yf.data(), nullptr);
  kernels::reference::Pool<float>(opt, g, planes, xf.data(), ref.data(), idx_ref.data());
  EXPECT_EQ(std::vector<float>(y.begin(), y.end()), yf) << iter;
  EXPECT_EQ(yf, ref) << iter;
  if (with_indices) {
    EXPECT_EQ(idx, idx_ref) << iter;
  }
}

TEST(PoolKernel, EightBitMaxPoolMatchesFloat) {
  std::mt19937_64 rng(33);
  for (int iter = 0; iter < 300; ++iter) {
    CheckIntegerMaxPool<int8_t>(rng, iter);
    CheckIntegerMaxPool<uint8_t>(rng, iter);
  }
}

TEST(PoolKernel, MaxUnpoolMatchesReference) {
  // Random pooled shapes re-placed into the same, larger and smaller output shapes, repeated
  // indices (later wins), element sizes 1-8.
  std::mt19937_64 rng(32);
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = iter % 3 + 1;
    std::vector<int64_t> in_dims(rank), out_dims(rank);
    for (int d = 0; d < rank; ++d) {
      in_dims[d] = static_cast<int64_t>(rng() % 4) + (iter % 11 == 0 ? 0 : 1);
      out_dims[d] = iter % 2 == 0 ? in_dims[d] : static_cast<int64_t>(rng() % 5);
    }
    const int64_t planes = rng() % 3 + 1;
    int64_t in_plane = 1, out_plane = 1;
    for (int d = 0; d < rank; ++d) {
      in_plane *= in_dims[d];
      out_plane *= out_dims[d];
    }
    const int64_t count = in_plane == 0 ? 0 : static_cast<int64_t>(rng() % 12);
    std::vector<int64_t> idx(static_cast<size_t>(count));
    for (int64_t& i : idx) i = static_cast<int64_t>(rng() % (planes * in_plane));
    const size_t es = size_t{1} << (rng() % 4);
    std::vector<uint8_t> x(static_cast<size_t>(count) * es);
    for (uint8_t& b : x) b = static_cast<uint8_t>(rng());
    std::vector<uint8_t> fast(static_cast<size_t>(planes * out_plane) * es, 0xAA),
        ref(fast.size(), 0x55);
    kernels::MaxUnpool(x.data(), idx.data(), count, in_dims, out_dims, planes, es, fast.data());
    kernels::reference::MaxUnpool(x.data(), idx.data(), count, in_dims, out_dims, planes, es,
                                  ref.data());
    EXPECT_EQ(fast, ref) << iter;
  }
}

// The fast 2-D pool against the reference on `x`, bit for bit: NaN where the reference has
// NaN, else the same value with the same sign (a zero's sign shows the taps' order).
void ExpectPoolMatchesReferenceBits(const kernels::PoolOptions& opt,
                                    const kernels::WindowGeometry& g, int64_t planes,
                                    const std::vector<float>& x, int iter) {
  std::vector<float> fast(planes * g.out_size()), ref(fast.size());
  std::vector<int64_t> ref_idx(fast.size());
  kernels::Pool<float>(opt, g, planes, x.data(), fast.data(), nullptr);
  kernels::reference::Pool<float>(opt, g, planes, x.data(), ref.data(), ref_idx.data());
  for (size_t i = 0; i < fast.size(); ++i) {
    if (std::isnan(ref[i])) {
      ASSERT_TRUE(std::isnan(fast[i])) << iter << " at " << i;
    } else {
      ASSERT_EQ(std::signbit(fast[i]), std::signbit(ref[i])) << iter << " at " << i;
      ASSERT_EQ(fast[i], ref[i]) << iter << " at " << i;
    }
  }
}

TEST(PoolKernel, MaxPool2DWithoutIndicesMatchesReference) {
  // The 2-D MaxPool fast path (no indices): random geometries with padding, dilation,
  // windows past the padded input, and NaNs placed at first and later taps.
  std::mt19937_64 rng(31);
  for (int iter = 0; iter < 300; ++iter) {
    kernels::WindowGeometry g = RandomGeometry(rng, 2, false);
    for (int d = 0; d < 2; ++d) {
      if (rng() % 3 == 0) ++g.out[d];
    }
    kernels::PoolOptions opt;
    opt.kind = kernels::PoolKind::kMax;
    const int64_t planes = rng() % 3 + 1;
    std::vector<float> x = RandomFloats(rng, planes * g.in_size());
    if (iter % 4 == 0) {
      for (int k = 0; k < 3; ++k) x[rng() % x.size()] = std::numeric_limits<float>::quiet_NaN();
    }
    ExpectPoolMatchesReferenceBits(opt, g, planes, x, iter);
    if (HasFailure()) return;
  }
}

TEST(PoolKernel, MaxPool2DWideRowsMatchReferenceBitForBit) {
  // Rows wider than MaxPoolRowRun's chunk of 64 outputs, strides 1, 2 (compile-time) and 3,
  // with pads, dilation and ceil-mode overhang at both ends, NaNs at first and later taps, and
  // signed zeros, whose bits only the scalar loop's tap order keeps.
  std::mt19937_64 rng(4602);
  for (int iter = 0; iter < 60; ++iter) {
    kernels::WindowGeometry g;
    for (int d = 0; d < 2; ++d) {
      const int64_t k = rng() % 3 + 2, s = rng() % 3 + 1, dl = rng() % 4 == 0 ? 2 : 1;
      const int64_t ek = (k - 1) * dl + 1;
      const int64_t pb = rng() % 2, pe = rng() % 2;
      const int64_t in = d == 0 ? rng() % 9 + ek : rng() % 180 + ek + 60;
      const int64_t out = (in + pb + pe - ek) / s + 1 + (rng() % 3 == 0 ? 1 : 0);
      AddAxis(&g, in, k, s, dl, pb, pe, out);
    }
    kernels::PoolOptions opt;
    opt.kind = kernels::PoolKind::kMax;
    const int64_t planes = rng() % 2 + 1;
    std::vector<float> x = RandomFloats(rng, planes * g.in_size());
    for (float& v : x) {
      if (rng() % 5 == 0) v = rng() % 2 ? 0.0f : -0.0f;
    }
    for (int k = 0; k < 6; ++k) x[rng() % x.size()] = std::numeric_limits<float>::quiet_NaN();
    ExpectPoolMatchesReferenceBits(opt, g, planes, x, iter);
    if (HasFailure()) return;
  }
}

// Each vector row kernel the CPU has (AVX-512, AVX2) against the plain MaxPoolRowRun, bit for
// bit: strides 1 and 2, runs of 1 to 100 outputs (every tail of the 16- and 8-wide blocks and
// of the four blocks a pass keeps), 1 to 4 taps each way, dilations 1 and 2, NaN at first and
// later taps and signed zeros. The row is the last thing in its buffer, so a load past the
// last tap a window needs reads outside it (the sanitizer build sees that).
TEST(PoolKernel, MaxPoolVectorRowsMatchThePlainRun) {
  using Kernel = void (*)(const kernels::MaxPoolRow&, float*);
  std::vector<std::pair<const char*, Kernel>> kernels_here;
  if (kernels::HasAvx512ForPool()) kernels_here.push_back({"avx512", kernels::MaxPoolRowRunAvx512});
  if (kernels::HasAvx2ForPool()) kernels_here.push_back({"avx2", kernels::MaxPoolRowRunAvx2});
  if (kernels_here.empty()) GTEST_SKIP() << "neither AVX-512 nor AVX2 on this CPU";
  std::mt19937_64 rng(1129);
  for (int iter = 0; iter < 400; ++iter) {
    const int64_t sw = rng() % 2 + 1, len = rng() % 100 + 1, kh = rng() % 4 + 1,
                  kw = rng() % 4 + 1, dh = rng() % 2 + 1, dw = rng() % 2 + 1;
    // Rows of in_w elements, the last window ending at the last element of the last row.
    const int64_t span_w = (len - 1) * sw + (kw - 1) * dw + 1;
    const int64_t in_w = span_w + static_cast<int64_t>(rng() % 3);
    const int64_t rows = (kh - 1) * dh + 1;
    std::vector<float> x = RandomFloats(rng, rows * in_w);
    for (float& v : x) {
      if (rng() % 6 == 0) v = rng() % 2 ? 0.0f : -0.0f;
      if (rng() % 40 == 0) v = std::numeric_limits<float>::quiet_NaN();
    }
    const float* row0 = x.data() + (in_w - span_w);
    std::vector<float> want(len);
    kernels::MaxPoolRowRun<0>(row0, len, sw, in_w, kh, dh, kw, dw, want.data());
    for (const auto& [name, kernel] : kernels_here) {
      std::vector<float> got(len + 1, 7.0f);  // got[len] must stay: nothing past the run
      kernel({row0, len, sw, in_w, kh, dh, kw, dw}, got.data());
      for (int64_t i = 0; i < len; ++i) {
        uint32_t a, b;
        std::memcpy(&a, &got[i], 4);
        std::memcpy(&b, &want[i], 4);
        ASSERT_EQ(a, b) << name << " iter " << iter << " output " << i << " of " << len
                        << " stride " << sw;
      }
      ASSERT_EQ(got[len], 7.0f) << name << " iter " << iter;
    }
  }
}

template <class T>
void CheckStoreSaturated(std::mt19937_64& rng) {
  // Values spread over and past T's range, halfway points, range ends and NaN.
  const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  std::vector<double> v = {lo,
                           hi,
                           lo - 1,
                           hi + 1,
                           0.5,
                           -0.5,
                           2.5,
                           -2.5,
                           1e300,
                           -1e300,
                           std::numeric_limits<double>::quiet_NaN()};
  std::uniform_real_distribution<double> dist(lo * 1.5 - 2, hi * 1.5 + 2);
  for (int i = 0; i < 200; ++i) v.push_back(dist(rng));
  for (int i = 0; i < 50; ++i) v.push_back(std::floor(dist(rng)) + 0.5);
  for (bool round : {false, true}) {
    std::vector<T> fast(v.size()), ref(v.size());
    kernels::StoreSaturated<T>(v.data(), static_cast<int64_t>(v.size()), round, fast.data());
    kernels::reference::StoreSaturated<T>(v.data(), static_cast<int64_t>(v.size()), round,
                                          ref.data());
    EXPECT_EQ(fast, ref) << "round " << round;
  }
}

TEST(ResizeKernel, StoreSaturatedMatchesReference) {
  std::mt19937_64 rng(5);
  CheckStoreSaturated<int8_t>(rng);
  CheckStoreSaturated<uint8_t>(rng);
  CheckStoreSaturated<int16_t>(rng);
  CheckStoreSaturated<int32_t>(rng);
  CheckStoreSaturated<uint32_t>(rng);
  CheckStoreSaturated<int64_t>(rng);
  CheckStoreSaturated<uint64_t>(rng);
}

TEST(ResizeKernel, SeparableMatchesDirectOnRandomTaps) {
  std::mt19937_64 rng(4);
  for (int iter = 0; iter < 100; ++iter) {
    const int rank = iter % 4 + 1;
    std::vector<int64_t> shape;
    std::vector<kernels::ResizeTaps> taps;
    for (int d = 0; d < rank; ++d) {
      const int64_t in = rng() % 4 + 1, out = rng() % 5 + 1;
      shape.push_back(in);
      kernels::ResizeTaps t;
      t.begin.push_back(0);
      for (int64_t j = 0; j < out; ++j) {
        const int64_t taps_here = rng() % 3;
        for (int64_t k = 0; k < taps_here; ++k) {
          t.index.push_back(rng() % in);
          t.weight.push_back(RandomFloats(rng, 1)[0]);
        }
        t.begin.push_back(static_cast<int64_t>(t.index.size()));
        t.extrapolate.push_back(rng() % 7 == 0);
      }
      taps.push_back(t);
    }
    int64_t in_total = 1, out_total = 1;
    for (int d = 0; d < rank; ++d) {
      in_total *= shape[d];
      out_total *= taps[d].out_size();
    }
    const std::vector<float> x = RandomFloats(rng, in_total);
    std::vector<float> fast(out_total), ref(out_total);
    kernels::Resize<float>(shape, taps, -7, x.data(), fast.data());
    kernels::reference::Resize<float>(shape, taps, -7, x.data(), ref.data());
    for (int64_t i = 0; i < out_total; ++i) ASSERT_NEAR(fast[i], ref[i], 1e-5) << iter;
  }
}

Tensor Floats(std::vector<int64_t> shape, std::vector<float> v) {
  return *Tensor::FromValues<float>(std::move(shape), absl::Span<const float>(v));
}

std::vector<float> Values(const Value& v) {
  auto s = v.tensor->values<float>();
  return std::vector<float>(s.begin(), s.end());
}

TEST(ConvOp, SamePaddingAndBias) {
  Node node = MakeNode("Conv", 3, 1, 11);
  node.attrs["auto_pad"] = StringAttr("SAME_UPPER");
  Tensor x = Floats({1, 1, 3}, {1, 2, 3});
  Tensor w = Floats({1, 1, 3}, {1, 1, 1});
  Tensor b = Floats({1}, {10});
  auto out = RunNode(node, {&x, &w, &b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{13, 16, 15}));
}

TEST(ConvOp, ChannelMismatchIsAnError) {
  Node node = MakeNode("Conv", 2, 1, 11);
  Tensor x = Floats({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor w = Floats({1, 1, 3}, {1, 1, 1});
  EXPECT_FALSE(RunNode(node, {&x, &w}).ok());
}

TEST(ConvTransposeOp, StridesAndOutputShape) {
  Node node = MakeNode("ConvTranspose", 2, 1, 11);
  node.attrs["strides"] = IntsAttr({2});
  Tensor x = Floats({1, 1, 2}, {1, 2});
  Tensor w = Floats({1, 1, 2}, {1, 10});
  auto out = RunNode(node, {&x, &w});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{1, 10, 2, 20}));
  node.attrs["output_shape"] = IntsAttr({5});
  out = RunNode(node, {&x, &w});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{1, 10, 2, 20, 0}));
}

TEST(PoolOps, MaxPoolIndicesAndCeilMode) {
  Node node = MakeNode("MaxPool", 1, 2, 12);
  node.attrs["kernel_shape"] = IntsAttr({2, 2});
  node.attrs["strides"] = IntsAttr({2, 2});
  node.attrs["ceil_mode"] = IntAttr(1);
  Tensor x = Floats({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto out = RunNode(node, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->shape(), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{5, 6, 8, 9}));
  const auto idx = (*out)[1].tensor->values<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(idx.begin(), idx.end()), (std::vector<int64_t>{4, 5, 7, 8}));
}

TEST(PoolOps, AveragePoolCountIncludePad) {
  Node node = MakeNode("AveragePool", 1, 1, 11);
  node.attrs["kernel_shape"] = IntsAttr({3});
  node.attrs["pads"] = IntsAttr({1, 1});
  Tensor x = Floats({1, 1, 3}, {3, 6, 9});
  auto out = RunNode(node, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{4.5f, 6, 7.5f}));
  node.attrs["count_include_pad"] = IntAttr(1);
  out = RunNode(node, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{3, 6, 5}));
}

TEST(PoolOps, GlobalAveragePool) {
  Node node = MakeNode("GlobalAveragePool", 1, 1, 11);
  Tensor x = Floats({1, 2, 2}, {1, 3, 5, 7});
  auto out = RunNode(node, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->shape(), (std::vector<int64_t>{1, 2, 1}));
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{2, 6}));
}

// 8-bit pooling is max only; the average and Lp forms, windowed or global, are refused
// (ONNX types them float only).
TEST(PoolOps, EightBitPoolingIsMaxOnly) {
  Tensor x = *Tensor::FromValues<int8_t>({1, 1, 4}, {-3, 7, 2, -8});
  for (const char* op : {"AveragePool", "LpPool", "GlobalAveragePool", "GlobalLpPool"}) {
    Node node = MakeNode(op, 1, 1, 11);
    if (std::string(op).find("Global") == std::string::npos) {
      node.attrs["kernel_shape"] = IntsAttr({2});
    }
    auto out = RunNode(node, {&x});
    ASSERT_FALSE(out.ok()) << op;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented) << op;
    EXPECT_NE(std::string(out.status().message()).find("dtype int8"), std::string::npos) << op;
  }
  Node global_max = MakeNode("GlobalMaxPool", 1, 1, 11);
  auto out = RunNode(global_max, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto y = (*out)[0].tensor->values<int8_t>();
  EXPECT_EQ(std::vector<int8_t>(y.begin(), y.end()), (std::vector<int8_t>{7}));
}

TEST(NormOps, BatchNormalizationInference) {
  Node node = MakeNode("BatchNormalization", 5, 1, 15);
  node.attrs["epsilon"] = FloatAttr(0);
  Tensor x = Floats({1, 2, 1}, {3, 5});
  Tensor scale = Floats({2}, {2, 1});
  Tensor bias = Floats({2}, {1, 0});
  Tensor mean = Floats({2}, {1, 1});
  Tensor var = Floats({2}, {4, 16});
  auto out = RunNode(node, {&x, &scale, &bias, &mean, &var});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{3, 1}));
}

TEST(NormOps, LayerNormalizationWithStats) {
  Node node = MakeNode("LayerNormalization", 2, 3, 17);
  node.attrs["epsilon"] = FloatAttr(0);
  Tensor x = Floats({2, 2}, {1, 3, 2, 2});
  Tensor scale = Floats({2}, {1, 2});
  auto out = RunNode(node, {&x, &scale, nullptr});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0])[0], -1);
  EXPECT_EQ(Values((*out)[0])[1], 2);
  EXPECT_EQ((*out)[1].tensor->shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Values((*out)[1]), (std::vector<float>{2, 2}));
  EXPECT_EQ(Values((*out)[2])[0], 1);
}

TEST(NormOps, InstanceNormalization) {
  Node node = MakeNode("InstanceNormalization", 3, 1, 6);
  node.attrs["epsilon"] = FloatAttr(0);
  Tensor x = Floats({1, 1, 2}, {1, 3});
  Tensor scale = Floats({1}, {2});
  Tensor bias = Floats({1}, {1});
  auto out = RunNode(node, {&x, &scale, &bias});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{-1, 3}));
}

TEST(ResizeOp, NearestUpsampleByScalesAndLinearAlignCorners) {
  Node node = MakeNode("Resize", 3, 1, 13);
  Tensor x = Floats({1, 2}, {1, 2});
  Tensor scales = Floats({2}, {1, 2});
  auto out = RunNode(node, {&x, nullptr, &scales});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{1, 1, 2, 2}));
  node.attrs["mode"] = StringAttr("linear");
  node.attrs["coordinate_transformation_mode"] = StringAttr("align_corners");
  Tensor scales3 = Floats({2}, {1, 1.5f});
  out = RunNode(node, {&x, nullptr, &scales3});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{1, 1.5f, 2}));
}

TEST(ResizeOp, SizesInputAndTfCropExtrapolation) {
  Node node = MakeNode("Resize", 4, 1, 13);
  node.attrs["mode"] = StringAttr("linear");
  node.attrs["coordinate_transformation_mode"] = StringAttr("tf_crop_and_resize");
  node.attrs["extrapolation_value"] = FloatAttr(-1);
  Tensor x = Floats({2}, {0, 10});
  Tensor roi = Floats({2}, {0.5f, 1.5f});
  Tensor sizes = *Tensor::FromValues<int64_t>({1}, {3});
  auto out = RunNode(node, {&x, &roi, nullptr, &sizes});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{5, 10, -1}));
}

TEST(HostileShapes, ResizeToHugeSizesIsRefusedBeforeAllocating) {
  Node node = MakeNode("Resize", 4, 1, 13);
  Tensor x = *Tensor::FromValues<float>({1, 1}, {1});
  Tensor sizes = *Tensor::FromValues<int64_t>({2}, {int64_t{1} << 40, int64_t{1} << 20});
  auto out = RunNode(node, {&x, nullptr, nullptr, &sizes});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(HostileShapes, HugeKernelAndPadsAreRejectedOrCheap) {
  Node node = MakeNode("MaxPool", 1, 1, 12);
  node.attrs["kernel_shape"] = IntsAttr({int64_t{1} << 40});
  Tensor x = *Tensor::FromValues<float>({1, 1, 2}, {1, 2});
  EXPECT_FALSE(RunNode(node, {&x}).ok());
  node.attrs["kernel_shape"] = IntsAttr({int64_t{1} << 30});
  node.attrs["pads"] = IntsAttr({int64_t{1} << 30, 0});
  auto out = RunNode(node, {&x});  // windows end at -1, 0 and 1
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->shape(), (std::vector<int64_t>{1, 1, 3}));
  EXPECT_EQ((*out)[0].tensor->data<float>()[1], 1);
  EXPECT_EQ((*out)[0].tensor->data<float>()[2], 2);
}

TEST(HostileShapes, ConvGroupOverflowIsAnError) {
  Node node = MakeNode("Conv", 2, 1, 11);
  node.attrs["group"] = testing::IntAttr(int64_t{1} << 62);
  Tensor x = *Tensor::FromValues<float>({1, 4, 1}, {1, 2, 3, 4});
  Tensor w = *Tensor::FromValues<float>({4, 4, 1}, std::vector<float>(16, 1));
  EXPECT_FALSE(RunNode(node, {&x, &w}).ok());
}

TEST(HostileShapes, MatMulWithEmptyHugeBatchAllocatesNothing) {
  Node node = MakeNode("MatMul", 2, 1, 13);
  Tensor a = *Tensor::Allocate(DType::kFloat32, {int64_t{1} << 40, 0, 2});
  Tensor b = *Tensor::Allocate(DType::kFloat32, {2, 3});
  auto out = RunNode(node, {&a, &b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->num_elements(), 0);
}

TEST(QuantizedOps, QLinearConvRequantizes) {
  Node node = MakeNode("QLinearConv", 8, 1, 10);
  Tensor x = *Tensor::FromValues<uint8_t>({1, 1, 2}, {3, 5});
  Tensor x_scale = *Tensor::FromValues<float>({}, {1});
  Tensor x_zp = *Tensor::FromValues<uint8_t>({}, {1});
  Tensor w = *Tensor::FromValues<uint8_t>({1, 1, 1}, {2});
  Tensor w_scale = *Tensor::FromValues<float>({}, {0.5f});
  Tensor w_zp = *Tensor::FromValues<uint8_t>({}, {0});
  Tensor y_scale = *Tensor::FromValues<float>({}, {1});
  Tensor y_zp = *Tensor::FromValues<uint8_t>({}, {250});
  auto out = RunNode(node, {&x, &x_scale, &x_zp, &w, &w_scale, &w_zp, &y_scale, &y_zp});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->data<uint8_t>()[0], 252);
  EXPECT_EQ((*out)[0].tensor->data<uint8_t>()[1], 254);
}

TEST(QuantizedOps, ConvIntegerRefusesPerChannelZeroPointsForNoMaps) {
  // W has no feature maps but two zero points: the per-slice size divided by W's first dim
  // (0) before the sizes were compared (SIGFPE).
  Node node = MakeNode("ConvInteger", 4, 1, 10);
  Tensor x = *Tensor::FromValues<uint8_t>({1, 1, 2}, {3, 5});
  Tensor w = *Tensor::FromValues<uint8_t>({0, 1, 1}, {});
  Tensor x_zp = *Tensor::FromValues<uint8_t>({}, {0});
  Tensor w_zp = *Tensor::FromValues<uint8_t>({2}, {1, 2});
  auto out = RunNode(node, {&x, &w, &x_zp, &w_zp});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(std::string(out.status().message()).find("zero point size"), std::string::npos);
}

TEST(QuantizedOps, RoiAlignAveragesBilinearSamples) {
  Node node = MakeNode("RoiAlign", 3, 1, 16);
  node.attrs["sampling_ratio"] = IntAttr(1);
  Tensor x = *Tensor::FromValues<float>({1, 1, 2, 2}, {0, 1, 2, 3});
  Tensor rois = *Tensor::FromValues<float>({1, 4}, {0.5f, 0.5f, 1.5f, 1.5f});
  Tensor idx = *Tensor::FromValues<int64_t>({1}, {0});
  auto out = RunNode(node, {&x, &rois, &idx});
  ASSERT_TRUE(out.ok()) << out.status();
  // half_pixel: the roi is [0,1]x[0,1] in pixel centres; its one sample sits at (0.5, 0.5).
  EXPECT_FLOAT_EQ((*out)[0].tensor->data<float>()[0], 1.5f);
}

TEST(NonMaxSuppressionOp, SuppressesOverlapsAndLimitsPerClass) {
  Node node = testing::MakeNode("NonMaxSuppression", 5, 1, 11);
  // Boxes 0 and 1 overlap with IoU 0.81; box 2 is apart.
  Tensor boxes = *Tensor::FromValues<float>({1, 3, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.0f, 5, 5, 6, 6});
  Tensor scores = *Tensor::FromValues<float>({1, 1, 3}, {0.9f, 0.95f, 0.3f});
  Tensor max_out = *Tensor::FromValues<int64_t>({1}, {3});
  Tensor iou = *Tensor::FromValues<float>({1}, {0.5f});
  Tensor score = *Tensor::FromValues<float>({1}, {0.2f});
  auto out = testing::RunNode(node, {&boxes, &scores, &max_out, &iou, &score});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto v = (*out)[0].tensor->values<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(v.begin(), v.end()), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  Tensor bad = *Tensor::FromValues<float>({1, 3}, {0, 0, 1});
  EXPECT_FALSE(testing::RunNode(node, {&bad, &scores}).ok());
}

TEST(UpsampleOp, Opset1AttributesAndOpset9ScalesInput) {
  Node v1 = testing::MakeNode("Upsample", 1, 1, 1);
  v1.attrs["height_scale"] = testing::FloatAttr(2);
  v1.attrs["width_scale"] = testing::FloatAttr(1);
  Tensor x = *Tensor::FromValues<float>({1, 1, 1, 2}, {1, 2});
  auto out = testing::RunNode(v1, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->shape(), (std::vector<int64_t>{1, 1, 2, 2}));
  Node v9 = testing::MakeNode("Upsample", 2, 1, 9);
  Tensor scales = *Tensor::FromValues<float>({4}, {1, 1, 1, 2});
  out = testing::RunNode(v9, {&x, &scales});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto v = (*out)[0].tensor->values<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), (std::vector<float>{1, 1, 2, 2}));
}

TEST(HostileShapes, GridSampleAndRoiAlignWithNonFiniteCoordinates) {
  Node grid_node = testing::MakeNode("GridSample", 2, 1, 16);
  Tensor x = *Tensor::FromValues<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const float inf = std::numeric_limits<float>::infinity();
  Tensor grid = *Tensor::FromValues<float>({1, 1, 3, 2}, {NAN, 0, inf, 0, -1e30f, 1e30f});
  for (const char* padding : {"zeros", "border", "reflection"}) {
    for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
      grid_node.attrs["padding_mode"] = testing::StringAttr(padding);
      grid_node.attrs["mode"] = testing::StringAttr(mode);
      EXPECT_TRUE(testing::RunNode(grid_node, {&x, &grid}).ok()) << padding << " " << mode;
    }
  }
  Node roi_node = testing::MakeNode("RoiAlign", 3, 1, 16);
  Tensor rois = *Tensor::FromValues<float>({1, 4}, {0, 0, NAN, 1});
  Tensor idx = *Tensor::FromValues<int64_t>({1}, {0});
  EXPECT_FALSE(testing::RunNode(roi_node, {&x, &rois, &idx}).ok());
}

TEST(HostileShapes, RoiAlignOnAnEmptyImageIsZeros) {
  // H or W of 0: no pixel to sample (the bilinear taps once read past an empty buffer).
  for (const std::vector<int64_t>& dims :
       std::vector<std::vector<int64_t>>{{1, 2, 0, 3}, {1, 2, 3, 0}}) {
    for (const char* mode : {"avg", "max"}) {
      Node node = testing::MakeNode("RoiAlign", 3, 1, 16);
      node.attrs["mode"] = testing::StringAttr(mode);
      node.attrs["output_height"] = testing::IntAttr(2);
      node.attrs["output_width"] = testing::IntAttr(2);
      Tensor x = *Tensor::FromValues<float>(dims, {});
      Tensor rois = *Tensor::FromValues<float>({2, 4}, {0, 0, 1, 1, -2, -2, 5, 5});
      Tensor idx = *Tensor::FromValues<int64_t>({2}, {0, 0});
      auto out = testing::RunNode(node, {&x, &rois, &idx});
      ASSERT_TRUE(out.ok()) << out.status();
      const Tensor& y = *(*out)[0].tensor;
      ASSERT_EQ(y.num_elements(), 2 * 2 * 2 * 2);
      for (int64_t k = 0; k < y.num_elements(); ++k) EXPECT_EQ(y.data<float>()[k], 0.0f) << mode;
    }
  }
}

TEST(Threads, PoolingAndSoftmaxAreIdenticalOnAnyThreadCount) {
  std::mt19937_64 rng(8);
  const std::vector<float> values = RandomFloats(rng, 2 * 16 * 20 * 20);
  Tensor x = *Tensor::FromValues<float>({2, 16, 20, 20}, absl::Span<const float>(values));
  ThreadPool pool(3);
  RunOptions threaded;
  threaded.threads = 4;
  threaded.pool = &pool;
  Node max_pool = testing::MakeNode("MaxPool", 1, 2, 12);
  max_pool.attrs["kernel_shape"] = testing::IntsAttr({3, 3});
  max_pool.attrs["pads"] = testing::IntsAttr({1, 1, 1, 1});
  Node softmax = testing::MakeNode("Softmax", 1, 1, 13);
  softmax.attrs["axis"] = testing::IntAttr(1);
  for (const Node* node : {&max_pool, &softmax}) {
    auto serial = testing::RunNode(*node, {&x});
    auto parallel = testing::RunNode(*node, {&x}, threaded);
    ASSERT_TRUE(serial.ok() && parallel.ok()) << node->op_type;
    for (size_t o = 0; o < serial->size(); ++o) {
      const Tensor& a = *(*serial)[o].tensor;
      const Tensor& b = *(*parallel)[o].tensor;
      ASSERT_EQ(a.byte_size(), b.byte_size());
      EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()), 0) << node->op_type;
    }
  }
}

}  // namespace
}  // namespace onnx_bcast::runtime
