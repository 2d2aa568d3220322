// Channel-blocked activations (kernels/channel_blocks.h, issue #32): the layout's loops against
// their reference on seeded random shapes, prepared oneDNN convolutions reading and writing the
// blocked layouts against the reference convolution, and models whose convolutions hand
// blocked values to each other run with the bits of the same models run in NCHW throughout.
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "proto/onnx_text.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/kernels/channel_blocks.h"
#include "runtime/kernels/conv.h"
#include "runtime/kernels/conv_onednn.h"
#include "runtime/kernels/pool.h"
#include "runtime/kernels/reference/channel_blocks.h"
#include "runtime/kernels/reference/conv.h"
#include "runtime/kernels/reference/pool.h"
#include "runtime/thread_pool.h"
#include "tests/support/sanitizer.h"
#include "tests/unit/runtime/exec_harness.h"
#include "tests/unit/runtime/ops_harness.h"

namespace onnx_bcast::runtime {
namespace {

using testing::ExpectNear;
using testing::ExpectSameBits;
using testing::RandomFloats;

// A channel count and a block that fits it: 8, 16, or all the channels (NHWC, any count).
struct Blocked {
  int64_t channels = 0;
  int block = 0;
};
Blocked RandomBlocked(std::mt19937_64& rng) {
  Blocked b;
  switch (rng() % 3) {
    case 0:
      b.block = 8;
      b.channels = 8 * static_cast<int64_t>(rng() % 4 + 1);
      break;
    case 1:
      b.block = 16;
      b.channels = 16 * static_cast<int64_t>(rng() % 3 + 1);
      break;
    default:
      b.channels = static_cast<int64_t>(rng() % 40 + 1);
      b.block = static_cast<int>(b.channels);
      break;
  }
  return b;
}

TEST(ChannelBlocks, ReordersMatchReference) {
  std::mt19937_64 rng(20261128);
  for (int trial = 0; trial < 200; ++trial) {
    const auto [c, block] = RandomBlocked(rng);
    ASSERT_TRUE(kernels::ChannelBlocksFit(c, block));
    // Spatial sizes around the 8-pixel tile, and empty.
    const int64_t n = rng() % 3 + 1, spatial = trial % 10 == 0 ? 0 : rng() % 150 + 1;
    const std::vector<float> x = RandomFloats(rng, n * c * spatial);
    std::vector<float> fast(x.size(), std::nanf("")), ref(x.size(), std::nanf(""));
    kernels::ToChannelBlocks(x.data(), n, c, spatial, block, fast.data());
    kernels::reference::ToChannelBlocks(x.data(), n, c, spatial, block, ref.data());
    const std::string what = "trial " + std::to_string(trial);
    ExpectSameBits(fast.data(), ref.data(), n * c * spatial, what + " to blocks");
    std::vector<float> back(x.size(), std::nanf("")), back_ref(x.size(), std::nanf(""));
    kernels::FromChannelBlocks(fast.data(), n, c, spatial, block, back.data());
    kernels::reference::FromChannelBlocks(ref.data(), n, c, spatial, block, back_ref.data());
    ExpectSameBits(back.data(), back_ref.data(), n * c * spatial, what + " from blocks");
    ExpectSameBits(back.data(), x.data(), n * c * spatial, what + " round trip");
  }
  EXPECT_FALSE(kernels::ChannelBlocksFit(24, 16));
  EXPECT_FALSE(kernels::ChannelBlocksFit(12, 4));
  EXPECT_TRUE(kernels::ChannelBlocksFit(12, 12));
}

// GlobalAveragePool on the blocked layout keeps the NCHW kernel's bits.
TEST(ChannelBlocks, GlobalAverageMatchesPoolExactly) {
  std::mt19937_64 rng(32);
  for (int trial = 0; trial < 100; ++trial) {
    const auto [c, block] = RandomBlocked(rng);
    const int64_t n = rng() % 2 + 1, h = rng() % 30 + 1, w = rng() % 30 + 1;
    const std::vector<float> x = RandomFloats(rng, n * c * h * w);
    std::vector<float> blocked(x.size());
    kernels::reference::ToChannelBlocks(x.data(), n, c, h * w, block, blocked.data());
    kernels::WindowGeometry g;
    g.in = g.kernel = {h, w};
    g.out = g.strides = g.dilations = {1, 1};
    g.pads_begin = g.pads_end = {0, 0};
    kernels::PoolOptions opt;
    opt.kind = kernels::PoolKind::kAverage;
    std::vector<float> fast(n * c, std::nanf("")), pool(n * c), ref(n * c);
    kernels::GlobalAverageChannelBlocks(blocked.data(), n, c, h * w, block, fast.data());
    kernels::Pool(opt, g, n * c, x.data(), pool.data(), nullptr);
    kernels::reference::Pool(opt, g, n * c, x.data(), ref.data(), nullptr);
    const std::string what = "trial " + std::to_string(trial);
    ExpectSameBits(fast.data(), pool.data(), n * c, what + " against Pool");
    ExpectSameBits(fast.data(), ref.data(), n * c, what + " against reference::Pool");
  }
}

// MaxPool on the blocked layout (the vector kernel the CPU takes and the plain loop), into
// blocks and into NCHW, keeps the NCHW kernel's bits: random geometries with pads, strides,
// dilations, windows past the padded input, NaNs at first and later taps, signed zeros, and a
// range of planes (given as their output rows, as the split over threads gives them) that
// leaves the others untouched.
TEST(ChannelBlocks, MaxPoolMatchesPoolExactly) {
  std::mt19937_64 rng(1130);
  for (int trial = 0; trial < 160; ++trial) {
    const auto [c, block] = RandomBlocked(rng);
    const int64_t n = rng() % 2 + 1;
    kernels::WindowGeometry g;
    for (int d = 0; d < 2; ++d) {
      const int64_t k = rng() % 3 + 1, s = rng() % 2 + 1, dl = rng() % 4 == 0 ? 2 : 1;
      const int64_t pb = rng() % 2, pe = rng() % 2, span = (k - 1) * dl + 1;
      const int64_t in = rng() % 12 + std::max<int64_t>(1, span - pb - pe);
      const int64_t out = (in + pb + pe - span) / s + 1 + (rng() % 4 == 0 ? 1 : 0);
      testing::AddAxis(&g, in, k, s, dl, pb, pe, out);
    }
    std::vector<float> x = RandomFloats(rng, n * c * g.in_size());
    for (float& v : x) {
      if (rng() % 6 == 0) v = rng() % 2 ? 0.0f : -0.0f;
      if (rng() % 30 == 0) v = std::nanf("");
    }
    std::vector<float> blocked(x.size());
    kernels::reference::ToChannelBlocks(x.data(), n, c, g.in_size(), block, blocked.data());
    kernels::PoolOptions opt;
    opt.kind = kernels::PoolKind::kMax;
    const int64_t out_size = n * c * g.out_size(), planes = n * (c / block);
    std::vector<float> want(out_size);
    kernels::Pool(opt, g, n * c, x.data(), want.data(), nullptr);
    const int64_t p0 = rng() % planes, p1 = p0 + 1 + rng() % (planes - p0);
    const int64_t plane_size = block * g.out_size();
    for (bool vector : {true, false}) {
      for (bool blocked_out : {true, false}) {
        std::vector<float> got(out_size, 7.0f);
        const int64_t r0 = p0 * g.out[0], r1 = p1 * g.out[0];
        if (vector) {
          kernels::MaxPoolChannelBlocks(g, blocked.data(), r0, r1, block, blocked_out, got.data());
        } else {
          kernels::MaxPoolChannelBlocksPlain(g, blocked.data(), r0, r1, block, blocked_out,
                                             got.data());
        }
        const std::string what = "trial " + std::to_string(trial) +
                                 (vector ? " vector" : " plain") +
                                 (blocked_out ? " into blocks" : " into NCHW");
        std::vector<float> nchw(out_size, 7.0f);
        if (blocked_out) {
          kernels::reference::FromChannelBlocks(got.data(), n, c, g.out_size(), block, nchw.data());
        } else {
          nchw = got;
        }
        // Planes [p0, p1) hold the pool; the others are untouched.
        for (int64_t i = 0; i < out_size; ++i) {
          const int64_t plane = blocked_out ? i / plane_size : (i / g.out_size()) / block;
          if (plane >= p0 && plane < p1) continue;
          ASSERT_EQ(got[i], 7.0f) << what << " wrote plane " << plane << " outside [" << p0 << ", "
                                  << p1 << ")";
        }
        ExpectSameBits(nchw.data() + p0 * plane_size, want.data() + p0 * plane_size,
                       (p1 - p0) * plane_size, what);
        if (HasFailure()) return;
      }
    }
  }
}

// Prepared oneDNN convolutions with x and y in every layout they accept: y (back in NCHW)
// matches the reference kernel, and has the bits of the NCHW run (the same primitive computes
// both). Channel counts include ones no block divides (5, 24, 40 against 16), and geometries
// cover strides, asymmetric pads, dilations and groups.
TEST(ConvKernel, BlockedLayoutsMatchReference) {
  if (!kernels::OneDnnConvAvailable()) GTEST_SKIP() << "built without oneDNN";
  std::mt19937_64 rng(20261129);
  static constexpr int64_t kChannels[] = {3, 5, 8, 16, 24, 32, 40, 48, 64};
  int blocked_in = 0, blocked_out = 0, odd_out = 0;
  for (int trial = 0; trial < 120; ++trial) {
    kernels::WindowGeometry g;
    const int64_t k = rng() % 3 == 0 ? 1 : 3;
    for (int d = 0; d < 2; ++d) {
      const int64_t s = rng() % 2 + 1, dl = rng() % 2 + 1, pb = rng() % 2, pe = rng() % 2;
      const int64_t span = (k - 1) * dl + 1;
      // Small maps: the reference convolution is a header template, compiled into this test
      // at the sanitizer build's -O0, where 20-wide maps took minutes.
      const int64_t in = rng() % 9 + std::max<int64_t>(1, span - pb - pe);
      testing::AddAxis(&g, in, k, s, dl, pb, pe, (in + pb + pe - span) / s + 1);
    }
    const int64_t group = rng() % 4 == 0 ? 2 : 1;
    const int64_t c = group * kChannels[rng() % 9], m = group * kChannels[rng() % 9];
    const int64_t n = rng() % 2 + 1;
    const std::vector<float> x = RandomFloats(rng, n * c * g.in_size());
    const std::vector<float> w = RandomFloats(rng, m * (c / group) * g.kernel_size());
    const std::vector<float> b = RandomFloats(rng, m);
    const float* bias = rng() % 2 ? b.data() : nullptr;
    const kernels::ConvPath onednn = kernels::ConvPath::kOneDnn;
    std::unique_ptr<kernels::PreparedConv> p = kernels::PrepareConv2D(
        g, n, c, m, group, w.data(), bias != nullptr, kernels::ConvChoice::kRule, &onednn);
    if (p == nullptr) continue;  // a geometry oneDNN refuses
    std::vector<float> ref(n * m * g.out_size()), plain(ref.size(), std::nanf(""));
    kernels::reference::Conv<float>(g, n, c, m, group, x.data(), w.data(), bias, ref.data());
    ASSERT_TRUE(p->Run(x.data(), w.data(), bias, plain.data(), nullptr));
    const int out = p->out_block();
    if (out != 0) {
      ASSERT_TRUE(kernels::ChannelBlocksFit(m, out)) << trial << " " << out;
      if (out == m && m != 8 && m != 16) ++odd_out;
    }
    for (int x_block : {0, 8, 16, static_cast<int>(c)}) {
      if (x_block != 0 && (!kernels::ChannelBlocksFit(c, x_block) || !p->takes_block(x_block))) {
        continue;
      }
      for (int y_block : {0, out}) {
        std::vector<float> xb(x.size());
        if (x_block == 0) {
          xb = x;
        } else {
          kernels::reference::ToChannelBlocks(x.data(), n, c, g.in_size(), x_block, xb.data());
        }
        std::vector<float> yb(ref.size(), std::nanf("")), y(ref.size(), std::nanf(""));
        ASSERT_TRUE(p->RunBlocked(xb.data(), x_block, w.data(), bias, yb.data(), y_block, nullptr))
            << trial;
        if (y_block == 0) {
          y = yb;
        } else {
          kernels::reference::FromChannelBlocks(yb.data(), n, m, g.out_size(), y_block, y.data());
        }
        const std::string what = "trial " + std::to_string(trial) + " x_block " +
                                 std::to_string(x_block) + " y_block " + std::to_string(y_block);
        ExpectNear(y.data(), ref.data(), static_cast<int64_t>(ref.size()), 2e-4f, what);
        ExpectSameBits(y.data(), plain.data(), static_cast<int64_t>(y.size()), what);
        blocked_in += x_block != 0;
        blocked_out += y_block != 0;
      }
    }
  }
  EXPECT_GE(blocked_in, 40);
  EXPECT_GE(blocked_out, 40);
  EXPECT_GE(odd_out, 5);  // NHWC outputs of channel counts no block of 8 divides
}

// Prepared oneDNN convolutions split over two threads (PrepareConv2D's `threads`): bands of
// rows (NHWC source and destination, or an NCHW source copied per band into nChw16c/nChw8c
// destinations of one block or of several) and slices of the maps (NCHW, nChw16c, nChw8c), in every
// input and output layout they accept, against the reference kernel and against the same
// convolution prepared for one thread.
TEST(ConvKernel, SplitOverThreadsMatchesReference) {
  if (!kernels::OneDnnConvAvailable()) GTEST_SKIP() << "built without oneDNN";
  std::mt19937_64 rng(4646);
  static constexpr int64_t kChannels[] = {3, 8, 16, 24, 32, 64};
  static constexpr int64_t kMaps[] = {8, 16, 32, 48, 64, 96};
  ThreadPool pool(2);
  const kernels::ParallelFor parallel = testing::PoolParallel(&pool);
  std::map<std::string, int> labels;
  for (int trial = 0; trial < 80; ++trial) {
    kernels::WindowGeometry g;
    const int64_t k = rng() % 4 == 0 ? 1 : 3;
    const int64_t c = kChannels[rng() % 6], m = kMaps[rng() % 6];
    for (int d = 0; d < 2; ++d) {
      const int64_t s = rng() % 3 == 0 ? 2 : 1, dl = rng() % 4 == 0 ? 2 : 1;
      const int64_t pb = rng() % 2, pe = rng() % 2, span = (k - 1) * dl + 1;
      // Few channels (stems, NCHW): larger maps, or the work is too small to split.
      const int64_t in = rng() % 14 + (c <= 8 ? 80 : 24);
      testing::AddAxis(&g, in, k, s, dl, pb, pe, (in + pb + pe - span) / s + 1);
    }
    const std::vector<float> x = RandomFloats(rng, c * g.in_size());
    const std::vector<float> w = RandomFloats(rng, m * c * g.kernel_size());
    const std::vector<float> b = RandomFloats(rng, m);
    const float* bias = rng() % 2 ? b.data() : nullptr;
    const kernels::ConvPath onednn = kernels::ConvPath::kOneDnn;
    std::unique_ptr<kernels::PreparedConv> split = kernels::PrepareConv2D(
        g, 1, c, m, 1, w.data(), bias != nullptr, kernels::ConvChoice::kRule, &onednn, 2);
    std::unique_ptr<kernels::PreparedConv> whole = kernels::PrepareConv2D(
        g, 1, c, m, 1, w.data(), bias != nullptr, kernels::ConvChoice::kRule, &onednn, 1);
    ASSERT_TRUE(split != nullptr && whole != nullptr) << trial;
    const bool first_of_kind = ++labels[split->label()] == 1;
    // Under the sanitizers only the first trial of each split kind and every 20th are compared
    // (about 3 s a trial there, the instrumented reference convolution); the plans are made
    // for every trial, so the kinds counted below are the same.
    if (!first_of_kind && trial % test_support::SweepStride(20) != 0) continue;
    std::vector<float> ref(m * g.out_size()), plain(ref.size(), std::nanf(""));
    kernels::reference::Conv<float>(g, 1, c, m, 1, x.data(), w.data(), bias, ref.data());
    ASSERT_TRUE(whole->Run(x.data(), w.data(), bias, plain.data(), nullptr));
    const int out = split->out_block();
    ASSERT_EQ(out, whole->out_block()) << trial;
    for (int x_block : {0, 8, 16, static_cast<int>(c)}) {
      if (x_block != 0 &&
          (!kernels::ChannelBlocksFit(c, x_block) || !split->takes_block(x_block))) {
        continue;
      }
      std::vector<float> xb(x.size());
      if (x_block == 0) {
        xb = x;
      } else {
        kernels::reference::ToChannelBlocks(x.data(), 1, c, g.in_size(), x_block, xb.data());
      }
      for (int y_block : {0, out}) {
        for (int rep = 0; rep < 2; ++rep) {  // on the pool, then on the caller alone
          std::vector<float> yb(ref.size(), std::nanf("")), y(ref.size(), std::nanf(""));
          ASSERT_TRUE(split->RunBlocked(xb.data(), x_block, w.data(), bias, yb.data(), y_block,
                                        rep == 0 ? &parallel : nullptr))
              << trial;
          if (y_block == 0) {
            y = yb;
          } else {
            kernels::reference::FromChannelBlocks(yb.data(), 1, m, g.out_size(), y_block, y.data());
          }
          const std::string what = "trial " + std::to_string(trial) + " " + split->label() +
                                   " x_block " + std::to_string(x_block) + " y_block " +
                                   std::to_string(y_block) + " rep " + std::to_string(rep);
          ExpectNear(y.data(), ref.data(), static_cast<int64_t>(ref.size()), 2e-4f, what);
          ExpectSameBits(y.data(), plain.data(), static_cast<int64_t>(y.size()), what);
        }
      }
    }
  }
  EXPECT_GE(labels["onednn-split-rows"], 5);
  EXPECT_GE(labels["onednn-nchw-split-rows"], 5);  // NCHW bands copied out
  EXPECT_GE(labels["onednn-split-maps"] + labels["onednn-nchw-split-maps"], 4);
}

// detector_head_crop's 96-map convolutions on 14 rows: on AVX-512 oneDNN computes a band of
// 3-4 of those rows with its reference kernel, so four bands were refused and one thread did
// the whole; two bands of 7 run on the whole's kernel. Whatever the ISA, two threads split it,
// to the bits of the one-thread convolution.
TEST(ConvKernel, ShortMapsSplitIntoFewerBands) {
  if (!kernels::OneDnnConvAvailable()) GTEST_SKIP() << "built without oneDNN";
  std::mt19937_64 rng(96);
  for (const int64_t stride : {1, 2}) {
    const int64_t c = stride == 1 ? 96 : 64, in = 14 * stride, m = 96;
    kernels::WindowGeometry g;
    for (int d = 0; d < 2; ++d) testing::AddAxis(&g, in, 3, stride, 1, 1, 1, 14);
    const std::vector<float> x = RandomFloats(rng, c * g.in_size());
    const std::vector<float> w = RandomFloats(rng, m * c * g.kernel_size());
    const std::vector<float> b = RandomFloats(rng, m);
    const kernels::ConvPath onednn = kernels::ConvPath::kOneDnn;
    std::unique_ptr<kernels::PreparedConv> split = kernels::PrepareConv2D(
        g, 1, c, m, 1, w.data(), true, kernels::ConvChoice::kRule, &onednn, 2);
    std::unique_ptr<kernels::PreparedConv> whole = kernels::PrepareConv2D(
        g, 1, c, m, 1, w.data(), true, kernels::ConvChoice::kRule, &onednn, 1);
    ASSERT_TRUE(split != nullptr && whole != nullptr);
    EXPECT_NE(std::string(split->label()).find("split"), std::string::npos) << split->label();
    ThreadPool pool(2);
    const kernels::ParallelFor parallel = testing::PoolParallel(&pool);
    std::vector<float> y(m * g.out_size(), std::nanf("")), plain(y.size(), std::nanf(""));
    ASSERT_TRUE(whole->Run(x.data(), w.data(), b.data(), plain.data(), nullptr));
    ASSERT_TRUE(split->Run(x.data(), w.data(), b.data(), y.data(), &parallel));
    ExpectSameBits(y.data(), plain.data(), static_cast<int64_t>(y.size()), split->label());
  }
}

std::string TextValues(std::mt19937_64& rng, int64_t count) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::string out = "{";
  for (int64_t i = 0; i < count; ++i) out += (i ? ", " : "") + std::to_string(dist(rng));
  return out + "}";
}

// A random float input [1, c, h, w].
Value RandomImage(std::mt19937_64& rng, int64_t c, int64_t h, int64_t w) {
  const std::vector<float> xv = RandomFloats(rng, c * h * w);
  return Value::Of(std::make_shared<Tensor>(
      *Tensor::FromValues<float>({1, c, h, w}, absl::Span<const float>(xv))));
}

// A graph text of one float input x [1, c0, h, w] and one output y, with `inits` and the
// nodes of `body`.
std::string ImageGraph(int64_t c0, int64_t h, int64_t w, const std::string& inits,
                       const std::string& body) {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
    g (float[1, )" +
         std::to_string(c0) + ", " + std::to_string(h) + ", " + std::to_string(w) +
         "] x) => (float[Y0, Y1, Y2, Y3] y) <" + inits + "> {" + body + "\n    }";
}

// Runs `text` on x with fusion (blocked layouts allowed) and without, twice each (the second on
// reused buffers and prepared state), and checks every output has the same bits. Returns the
// blocked node outputs of the fused executor's second run.
int64_t ExpectBlockedMatchesPlain(const std::string& text, const Value& x) {
  RunOptions plain;
  plain.fuse_elementwise = false;
  auto a = testing::ExecutorFromText(text, RunOptions());
  auto b = testing::ExecutorFromText(text, plain);
  EXPECT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  if (!a.ok() || !b.ok()) return -1;
  int64_t blocked = 0;
  for (int run = 0; run < 2; ++run) {
    const int64_t before = (*a)->blocked_outputs();
    auto ya = (*a)->Run({{"x", x}});
    auto yb = (*b)->Run({{"x", x}});
    EXPECT_TRUE(ya.ok() && yb.ok()) << ya.status() << yb.status();
    if (!ya.ok() || !yb.ok()) return -1;
    blocked = (*a)->blocked_outputs() - before;
    EXPECT_EQ((*b)->blocked_outputs(), 0);
    EXPECT_EQ(ya->size(), yb->size());
    for (size_t i = 0; i < ya->size() && i < yb->size(); ++i) {
      const Tensor& ta = *(*ya)[i].tensor;
      const Tensor& tb = *(*yb)[i].tensor;
      EXPECT_EQ(ta.shape(), tb.shape());
      if (ta.shape() != tb.shape() || ta.dtype() != DType::kFloat32) continue;
      ExpectSameBits(ta.data<float>(), tb.data<float>(), ta.num_elements(),
                     "output " + std::to_string(i) + " run " + std::to_string(run));
    }
  }
  return blocked;
}

// Seeded random stacks of convolutions (channel counts on and off the blocks, strides, pads,
// dilations, a depthwise layer) with a fused Relu, GELU as exported (an elementwise chain),
// GlobalAveragePool, and readers that cannot take the blocked layout (Transpose, Add, a graph
// output): fused and plain runs give the same bits.
TEST(BlockedExecutor, ConvStacksMatchThePlainRun) {
  std::mt19937_64 rng(20261130);
  static constexpr int64_t kMaps[] = {5, 8, 16, 24, 32, 48};
  int64_t blocked_total = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const int64_t c0 = rng() % 3 + 2, m1 = kMaps[rng() % 6], m2 = kMaps[rng() % 6],
                  m3 = kMaps[rng() % 6];
    const int64_t h = rng() % 20 + 8, w = rng() % 20 + 8;
    const int64_t s1 = rng() % 2 + 1, d2 = rng() % 2 + 1;
    const std::string inits =
        "float[" + std::to_string(m1) + ", " + std::to_string(c0) +
        ", 3, 3] w1 = " + TextValues(rng, m1 * c0 * 9) + ", float[" + std::to_string(m1) +
        "] b1 = " + TextValues(rng, m1) + ", float[" + std::to_string(m2) + ", " +
        std::to_string(m1) + ", 3, 3] w2 = " + TextValues(rng, m2 * m1 * 9) + ", float[" +
        std::to_string(m2) + ", 1, 3, 3] wd = " + TextValues(rng, m2 * 9) + ", float[" +
        std::to_string(m3) + ", " + std::to_string(m2) +
        ", 1, 1] w3 = " + TextValues(rng, m3 * m2) + ", float[" + std::to_string(m1) + ", " +
        std::to_string(m3) + ", 3, 3] w4 = " + TextValues(rng, m1 * m3 * 9) +
        ", float half = {0.5}";
    // Tails: what reads the last convolution's output.
    static const char* kTails[] = {
        // GELU as exported, then GlobalAveragePool: both on the blocked buffer.
        R"(e1 = Div(c3, sq)
           e2 = Erf(e1)
           e3 = Add(e2, one)
           e4 = Mul(c3, e3)
           e5 = Mul(e4, half)
           y = GlobalAveragePool(e5))",
        // A reader that cannot take blocks and one that can.
        R"(t = Transpose <perm = [0, 2, 3, 1]> (c3)
           p = GlobalAveragePool(c3)
           y = ReduceSum <keepdims = 1> (t))",
        // GELU read by an Add, which cannot take blocks: the chain makes its x NCHW first.
        R"(e1 = Div(c3, sq)
           e2 = Erf(e1)
           e3 = Add(e2, one)
           e4 = Mul(c3, e3)
           e5 = Mul(e4, half)
           y = Add(e5, e5))",
        // The convolution's output is the graph's.
        R"(y = Identity(c3))",
    };
    const int tail = trial % 4;
    const std::string text =
        ImageGraph(c0, h, w, inits,
                   R"(
      sq = Constant <value = float {1.4142135}> ()
      one = Constant <value = float {1.0}> ()
      c1 = Conv <pads = [1, 1, 1, 1], strides = [)" +
                       std::to_string(s1) + ", " + std::to_string(s1) + R"(]> (x, w1, b1)
      r1 = Relu(c1)
      c2 = Conv <pads = [)" +
                       std::to_string(d2) + ", " + std::to_string(d2) + ", " + std::to_string(d2) +
                       ", " + std::to_string(d2) + "], dilations = [" + std::to_string(d2) + ", " +
                       std::to_string(d2) +
                       R"(]> (r1, w2)
      r2 = Relu(c2)
      cd = Conv <pads = [1, 0, 1, 2], group = )" +
                       std::to_string(m2) + R"(> (r2, wd)
      pw = Conv (cd, w3)
      c3 = Conv <pads = [1, 1, 1, 1]> (pw, w4)
      )" + kTails[tail]);
    blocked_total += ExpectBlockedMatchesPlain(text, RandomImage(rng, c0, h, w));
    if (HasFailure()) return;
  }
  if (kernels::OneDnnConvAvailable()) {
    EXPECT_GE(blocked_total, 30);
  }
}

// MaxPool between convolutions reads and writes the blocked layout: a convolution's blocked
// output pooled into blocks for a convolution that takes them, into NCHW for a reader that
// does not (Add), with ceil mode, pads and dilations; fused and plain runs give the same bits,
// and the pools' outputs are among the blocked ones.
TEST(BlockedExecutor, MaxPoolBetweenConvolutionsMatchesThePlainRun) {
  std::mt19937_64 rng(1131);
  static constexpr int64_t kMaps[] = {8, 16, 24, 32, 48};
  int64_t blocked_total = 0;
  for (int trial = 0; trial < 16; ++trial) {
    const int64_t c0 = rng() % 3 + 2, m1 = kMaps[rng() % 5], m2 = kMaps[rng() % 5];
    const int64_t h = rng() % 16 + 10, w = rng() % 16 + 10;
    const int64_t k = rng() % 2 + 2, s = rng() % 2 + 1, d = rng() % 3 == 0 ? 2 : 1;
    const std::string pool_attrs =
        "kernel_shape = [" + std::to_string(k) + ", " + std::to_string(k) + "], strides = [" +
        std::to_string(s) + ", " + std::to_string(s) + "], dilations = [" + std::to_string(d) +
        ", " + std::to_string(d) +
        "], pads = [0, 1, 1, 0], ceil_mode = " + std::to_string(trial % 2);
    const std::string inits = "float[" + std::to_string(m1) + ", " + std::to_string(c0) +
                              ", 3, 3] w1 = " + TextValues(rng, m1 * c0 * 9) + ", float[" +
                              std::to_string(m2) + ", " + std::to_string(m1) +
                              ", 3, 3] w2 = " + TextValues(rng, m2 * m1 * 9);
    // Tails: the second pool read by a graph output's Add (NCHW), or by GlobalAveragePool.
    const std::string tail = trial % 4 < 2 ? "y = Add(p2, p2)" : "y = GlobalAveragePool(p2)";
    const std::string text = ImageGraph(c0, h, w, inits, R"(
      c1 = Conv <pads = [1, 1, 1, 1]> (x, w1)
      r1 = Relu(c1)
      p1 = MaxPool <)" + pool_attrs + R"(> (r1)
      c2 = Conv <pads = [1, 1, 1, 1]> (p1, w2)
      p2 = MaxPool <)" + pool_attrs + R"(> (c2)
      )" + tail);
    blocked_total += ExpectBlockedMatchesPlain(text, RandomImage(rng, c0, h, w));
    if (HasFailure()) return;
  }
  // Per trial at least c1 (or its Relu) and p1 when oneDNN writes blocks for these maps.
  if (kernels::OneDnnConvAvailable()) {
    EXPECT_GE(blocked_total, 16);
  }
}

// Concat on axis 1 of two convolution branches (a fire or inception module) reads and writes
// the blocked layout when both branches come in the same block, and makes them NCHW when they
// do not (different blocks, a third input that is NCHW, a repeated input): fused and plain
// runs give the same bits, and the concatenations are among the blocked outputs.
TEST(BlockedExecutor, ConcatOfBranchesMatchesThePlainRun) {
  std::mt19937_64 rng(1129);
  static constexpr int64_t kMaps[] = {8, 16, 32, 48};
  int concat_trials = 0;
  for (int trial = 0; trial < 16; ++trial) {
    // The branches mostly alike, of 8 or 16 maps (one block of them is also their NHWC, which
    // oneDNN writes on AVX-512), every fourth trial apart.
    const int64_t c0 = rng() % 3 + 2, m1 = kMaps[rng() % 4], ma = kMaps[rng() % 2],
                  mb = trial % 4 == 3 ? kMaps[rng() % 4] : ma;
    const int64_t h = rng() % 12 + 8, w = rng() % 12 + 8;
    const std::string inits =
        "float[" + std::to_string(m1) + ", " + std::to_string(c0) +
        ", 3, 3] w1 = " + TextValues(rng, m1 * c0 * 9) + ", float[" + std::to_string(ma) + ", " +
        std::to_string(m1) + ", 3, 3] wa = " + TextValues(rng, ma * m1 * 9) + ", float[" +
        std::to_string(mb) + ", " + std::to_string(m1) +
        ", 3, 3] wb = " + TextValues(rng, mb * m1 * 9) + ", float[16, " +
        std::to_string(2 * (ma + mb)) + ", 1, 1] w2 = " + TextValues(rng, 16 * 2 * (ma + mb));
    // Concat forms: two branches, then the result twice; then with the branches again; with x
    // (NCHW) as a third input, then without it on axis -3.
    static const char* kConcats[] = {
        "cat = Concat <axis = 1> (a, b)\n      cat2 = Concat <axis = 1> (cat, cat)",
        "cat = Concat <axis = 1> (a, b)\n      cat2 = Concat <axis = 1> (b, cat, a)",
        "cat = Concat <axis = 1> (a, x, b)\n      cat2 = Concat <axis = -3> (a, b, a, b)",
    };
    // Tails: a pool and a convolution (both take blocks), or an Add (NCHW).
    const std::string tail =
        trial % 4 != 1 ? "p = MaxPool <kernel_shape = [2, 2]> (cat2)\n      y = Conv (p, w2)"
                       : "y = Add(cat2, cat2)";
    const std::string text = ImageGraph(c0, h, w, inits, R"(
      c1 = Conv <pads = [1, 1, 1, 1]> (x, w1)
      r1 = Relu(c1)
      a = Conv <pads = [1, 1, 1, 1]> (r1, wa)
      b = Conv <pads = [1, 1, 1, 1]> (r1, wb)
      )" + std::string(kConcats[trial % 3]) + "\n      " + tail);
    // r1, a, b, cat and more: the concatenations kept them blocked.
    concat_trials += ExpectBlockedMatchesPlain(text, RandomImage(rng, c0, h, w)) >= 3;
    if (HasFailure()) return;
  }
  if (kernels::OneDnnConvAvailable()) {
    EXPECT_GE(concat_trials, 4);
  }
}

}  // namespace
}  // namespace onnx_bcast::runtime
