// Broadcast kernel throughput on shapes from real models (float32 Add over every kernel
// kind, a few other ops and dtypes), each large case beside a plain c[i]=a[i]+b[i] loop of
// the same byte volume so the ratio to memory bandwidth can be read off.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "benchmark/benchmark.h"
#include "runtime/kernels/binary.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace onnx_bcast::rt {
namespace {

using Shape = std::vector<int64_t>;

Shape Broadcast(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t k = 1; k <= rank; ++k) {
    const int64_t x = k <= a.size() ? a[a.size() - k] : 1;
    const int64_t y = k <= b.size() ? b[b.size() - k] : 1;
    out[rank - k] = x == 1 ? y : x;
  }
  return out;
}

Tensor Filled(DType dtype, const Shape& shape) {
  Tensor t = Tensor::Allocate(dtype, shape).value();
  VisitDType(dtype, 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = (i % 3) != 0;
      } else if constexpr (std::is_integral_v<T>) {
        p[i] = static_cast<T>(1 + i % 7);
      } else if constexpr (std::is_floating_point_v<T>) {
        p[i] = static_cast<T>(1 + i % 7) * T(0.25);
      }
    }
    return 0;
  });
  return t;
}

// Bytes a kernel must move at least: every input read once, the output written once.
int64_t BytesMoved(const Tensor& a, const Tensor& b, const Tensor& out) {
  return static_cast<int64_t>(a.byte_size() + b.byte_size() + out.byte_size());
}

void BM_Binary(benchmark::State& state, OpKind op, DType dtype, Shape sa, Shape sb) {
  const Tensor a = Filled(dtype, sa);
  const Tensor b = Filled(dtype, sb);
  const Shape so = Broadcast(sa, sb);
  Tensor out = Tensor::Allocate(BinaryOutputDType(op, dtype), so).value();
  // Plan once, as an executor caching per shape tuple would.
  const BroadcastPlan plan = BroadcastPlan::Create(sa, sb, so).value();
  BinaryOptions opts;
  opts.threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    absl::Status s = BinaryOp(op, plan, a, b, &out, opts);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(out.raw_data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * BytesMoved(a, b, out));
  state.SetItemsProcessed(state.iterations() * out.num_elements());
  state.SetLabel(KernelKindName(plan.kind()).data());
}

__attribute__((noinline)) void StreamAdd(const float* __restrict a, const float* __restrict b,
                                         float* __restrict c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

// c[i] = a[i] + b[i] over three arrays holding `bytes` in total.
void BM_Stream(benchmark::State& state, int64_t bytes) {
  const int64_t n = bytes / 12;
  Tensor a = Filled(DType::kFloat32, {n});
  Tensor b = Filled(DType::kFloat32, {n});
  Tensor c = Tensor::Allocate(DType::kFloat32, {n}).value();
  const int threads = static_cast<int>(state.range(0));
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* pc = c.data<float>();
  for (auto _ : state) {
    ThreadPool::Default().ParallelFor(threads, threads, [&](int64_t t) {
      const int64_t begin = n * t / threads;
      const int64_t end = n * (t + 1) / threads;
      StreamAdd(pa + begin, pb + begin, pc + begin, end - begin);
    });
    benchmark::DoNotOptimize(pc);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * n * 12);
  state.SetItemsProcessed(state.iterations() * n);
}

struct Case {
  std::string name;
  OpKind op;
  DType dtype;
  Shape a, b;
  bool large;  // gets a STREAM baseline
};

void RegisterAll() {
  const Shape nchw = {4, 64, 256, 256};
  const Shape channel = {1, 64, 1, 1};
  const Case cases[] = {
      {"same", OpKind::kAdd, DType::kFloat32, nchw, nchw, true},
      {"scalar", OpKind::kAdd, DType::kFloat32, nchw, {}, true},
      {"per_channel", OpKind::kAdd, DType::kFloat32, nchw, channel, true},
      {"inner_row", OpKind::kAdd, DType::kFloat32, {16384, 1024}, {1024}, true},
      {"outer_column", OpKind::kAdd, DType::kFloat32, {16384, 1024}, {16384, 1}, true},
      {"bidirectional", OpKind::kAdd, DType::kFloat32, {256, 1, 1024}, {1, 256, 1024}, true},
      {"middle_axis", OpKind::kAdd, DType::kFloat32, {128, 1, 4096}, {128, 32, 4096}, true},
      {"tiny", OpKind::kAdd, DType::kFloat32, {1, 3, 8, 8}, {3, 1, 1}, false},
      {"per_channel", OpKind::kMul, DType::kFloat32, nchw, channel, false},
      {"per_channel", OpKind::kDiv, DType::kFloat32, nchw, channel, false},
      {"per_channel", OpKind::kMax, DType::kFloat32, nchw, channel, false},
      {"per_channel", OpKind::kAdd, DType::kInt32, nchw, channel, false},
      {"per_channel", OpKind::kAnd, DType::kBool, nchw, channel, false},
  };
  for (const Case& c : cases) {
    const std::string name =
        absl::StrCat(OpKindName(c.op), "_", DTypeName(c.dtype), "/", c.name, "/",
                     absl::StrJoin(c.a, "x"), "+", absl::StrJoin(c.b, "x"));
    benchmark::RegisterBenchmark(name.c_str(), BM_Binary, c.op, c.dtype, c.a, c.b)
        ->ArgName("threads")
        ->Arg(1)
        ->Arg(2)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    if (!c.large) continue;
    int64_t elements_a = 1, elements_b = 1, elements_out = 1;
    for (int64_t d : c.a) elements_a *= d;
    for (int64_t d : c.b) elements_b *= d;
    for (int64_t d : Broadcast(c.a, c.b)) elements_out *= d;
    const int64_t bytes = (elements_a + elements_b + elements_out) * 4;
    benchmark::RegisterBenchmark(absl::StrCat("STREAM_add/", c.name).c_str(), BM_Stream, bytes)
        ->ArgName("threads")
        ->Arg(1)
        ->Arg(2)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace onnx_bcast::rt

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  onnx_bcast::rt::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
