// bench_conv: float Conv kernels on 2-D geometries taken from the export corpus at 224x224
// and from ResNet/MobileNet-sized layers: the banded im2col path Conv takes against the
// whole-image im2col + GEMM path it replaced (same OpenBLAS sgemm underneath), and oneDNN
// (what Conv runs when the build has it and the geometry qualifies). `conv` is what Conv
// picks; the others force one path.
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "runtime/kernels/conv.h"
#include "runtime/kernels/conv_onednn.h"
#include "runtime/kernels/gemm.h"
#include "runtime/thread_pool.h"

namespace onnx_bcast::bench {
namespace {

namespace kernels = runtime::kernels;

struct ConvCase {
  const char* name;
  int64_t c, m, group, h, w, k, stride, pad, dilation = 1;
};

kernels::WindowGeometry Geometry(const ConvCase& cc) {
  kernels::WindowGeometry g;
  for (int64_t in : {cc.h, cc.w}) {
    g.in.push_back(in);
    g.kernel.push_back(cc.k);
    g.strides.push_back(cc.stride);
    g.dilations.push_back(cc.dilation);
    g.pads_begin.push_back(cc.pad);
    g.pads_end.push_back(cc.pad);
    g.out.push_back((in + 2 * cc.pad - (cc.k - 1) * cc.dilation - 1) / cc.stride + 1);
  }
  return g;
}

std::vector<float> Random(int64_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

// kConv..kWhole: per-call kernels (weights packed on every call). kPrepared*: the executor's
// per-node state for constant weights (PrepareConv2D once, then only Run is timed).
// kSplit2: oneDNN prepared for two threads (split into parts) and run on a two-thread pool;
// kSplit2Serial: the same parts run one after the other on the caller (their own cost).
enum class Path {
  kConv,
  kOneDnn,
  kBanded,
  kWhole,
  kPrepared,
  kPreparedOneDnn,
  kSmallMap,
  kSplit2,
  kSplit2Serial
};

void BM_Conv(benchmark::State& state, ConvCase cc, Path path) {
  kernels::KeepBlasSingleThreaded();
  const kernels::WindowGeometry g = Geometry(cc);
  const std::vector<float> x = Random(cc.c * g.in_size());
  const std::vector<float> w = Random(cc.m * (cc.c / cc.group) * g.kernel_size());
  const std::vector<float> b = Random(cc.m);
  std::vector<float> y(static_cast<size_t>(cc.m * g.out_size()));
  std::unique_ptr<kernels::PreparedConv> prepared;
  const bool split = path == Path::kSplit2 || path == Path::kSplit2Serial;
  runtime::ThreadPool pool(1);
  const kernels::ParallelFor on_pool = [&](int64_t n, const std::function<void(int64_t)>& fn) {
    pool.ParallelFor(n, 2, fn);
  };
  const kernels::ParallelFor serial = [](int64_t n, const std::function<void(int64_t)>& fn) {
    for (int64_t i = 0; i < n; ++i) fn(i);
  };
  const kernels::ParallelFor* parallel =
      path == Path::kSplit2 ? &on_pool : path == Path::kSplit2Serial ? &serial : nullptr;
  if (path == Path::kPrepared || path == Path::kPreparedOneDnn || path == Path::kSmallMap ||
      split) {
    const kernels::ConvPath forced =
        path == Path::kSmallMap ? kernels::ConvPath::kSmallMap : kernels::ConvPath::kOneDnn;
    prepared = kernels::PrepareConv2D(g, 1, cc.c, cc.m, cc.group, w.data(), true,
                                      kernels::DefaultConvChoice(),
                                      path == Path::kPrepared ? nullptr : &forced, split ? 2 : 1);
    if (prepared == nullptr) {
      state.SkipWithError("path does not apply");
      return;
    }
    state.SetLabel(prepared->label());
  }
  for (auto _ : state) {
    if (prepared != nullptr) {
      prepared->Run(x.data(), w.data(), b.data(), y.data(), parallel);
      benchmark::DoNotOptimize(y.data());
      benchmark::ClobberMemory();
      continue;
    }
    if (path == Path::kConv) {
      kernels::Conv<float>(g, 1, cc.c, cc.m, cc.group, x.data(), w.data(), b.data(), y.data());
    } else if (path == Path::kOneDnn) {
      if (!kernels::OneDnnConv2D(g, 1, cc.c, cc.m, cc.group, x.data(), w.data(), b.data(), y.data(),
                                 1)) {
        state.SkipWithError("oneDNN declined");
        break;
      }
    } else if (path == Path::kBanded) {
      kernels::ConvNoOneDnn<float>(g, 1, cc.c, cc.m, cc.group, x.data(), w.data(), b.data(),
                                   y.data());
    } else {
      kernels::ConvIm2colWhole<float>(g, 1, cc.c, cc.m, cc.group, x.data(), w.data(), b.data(),
                                      y.data());
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  // Multiply-adds per second: the work, whatever the path.
  state.SetItemsProcessed(state.iterations() * cc.m * g.out_size() * (cc.c / cc.group) *
                          g.kernel_size());
}

void RegisterAll() {
  const ConvCase cases[] = {
      {"resnet_block_stem_3to8_k3s2", 3, 8, 1, 224, 224, 3, 2, 1},
      {"resnet_block_c1_8to8_k3", 8, 8, 1, 112, 112, 3, 1, 1},
      {"resnet_block_c3_8to16_k3s2", 8, 16, 1, 112, 112, 3, 2, 1},
      {"resnet_block_down_8to16_k1s2", 8, 16, 1, 112, 112, 1, 2, 0},
      {"fpn_lat_16to8_k1", 16, 8, 1, 56, 56, 1, 1, 0},
      {"swin_patch_3to16_k4s4", 3, 16, 1, 224, 224, 4, 4, 0},
      {"resnet18_64to64_k3", 64, 64, 1, 56, 56, 3, 1, 1},
      {"resnet50_256to64_k1", 256, 64, 1, 56, 56, 1, 1, 0},
      {"resnet18_512to512_k3", 512, 512, 1, 7, 7, 3, 1, 1},
      {"resnet18_stem_3to64_k7s2", 3, 64, 1, 224, 224, 7, 2, 3},
      {"grouped_64to64_g4_k3", 64, 64, 4, 56, 56, 3, 1, 1},
      {"depthwise_64_k5", 64, 64, 64, 14, 14, 5, 1, 2},
      {"depthwise_72_k3s2", 72, 72, 72, 56, 56, 3, 2, 1},
      {"depthwise_16_k3s2", 16, 16, 16, 112, 112, 3, 2, 1},
      // Small maps (issue #32: models run at 64x80): a dilated head on 4x5, the last stage of
      // a residual CNN on 2x3, a stem at 64x80, a classifier's middle layers.
      {"seg_head_256to256_k3d2_4x5", 256, 256, 1, 4, 5, 3, 1, 2, 2},
      {"res_512to512_k3_2x3", 512, 512, 1, 2, 3, 3, 1, 1},
      {"res_256to256_k3_4x5", 256, 256, 1, 4, 5, 3, 1, 1},
      {"res_128to128_k3_8x10", 128, 128, 1, 8, 10, 3, 1, 1},
      {"stem_3to64_k3s2_64x80", 3, 64, 1, 64, 80, 3, 2, 1},
      {"pw_512to512_k1_2x3", 512, 512, 1, 2, 3, 1, 1, 0},
  };
  for (const ConvCase& c : cases) {
    const std::pair<Path, const char*> paths[] = {
        {Path::kConv, "conv"},         {Path::kOneDnn, "onednn"},
        {Path::kBanded, "banded"},     {Path::kWhole, "whole"},
        {Path::kPrepared, "prepared"}, {Path::kPreparedOneDnn, "prepared_onednn"},
        {Path::kSmallMap, "small_map"},  {Path::kSplit2, "split2"},
        {Path::kSplit2Serial, "split2_serial"}};
    for (const auto& [path, label] : paths) {
      benchmark::RegisterBenchmark(absl::StrCat("Conv/", c.name, "/", label).c_str(), BM_Conv, c,
                                   path)
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace
}  // namespace onnx_bcast::bench

int main(int argc, char** argv) {
  onnx_bcast::bench::RegisterAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
