// Broadcast kernel throughput over the case table of issue #7 (bench_util.h): float32 Add,
// Mul, Div, Max, int32 Add and bool And on every case, each on 1 and 2 threads, with
// STREAM-style passes (ordinary and non-temporal stores) of each large case's byte volume
// (the add, and the case's own read/write mix) so the ratio to the memory bandwidth limit
// can be read off the bytes_per_second column.
// Not run by ctest; bench/peer/compare.sh drives the peer comparison.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/bench_util.h"
#include "benchmark/benchmark.h"
#include "runtime/kernels/binary.h"
#include "runtime/tensor.h"

namespace onnx_bcast::bench {
namespace {

using runtime::DType;
using runtime::OpKind;

void BM_Binary(benchmark::State& state, OpKind op, DType dtype, Shape sa, Shape sb) {
  const runtime::Tensor a = Filled(dtype, sa);
  const runtime::Tensor b = Filled(dtype, sb);
  const Shape so = Broadcast(sa, sb);
  runtime::Tensor out = Filled(runtime::BinaryOutputDType(op, dtype), so);
  // Plan once, as an executor caching per shape tuple would.
  const runtime::BroadcastPlan plan = runtime::BroadcastPlan::Create(sa, sb, so).value();
  runtime::BinaryOptions opts;
  opts.threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    absl::Status s = runtime::BinaryOp(op, plan, a, b, &out, opts);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(out.raw_data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() *
                          BytesMoved(sa, sb, a.element_size(), out.element_size()));
  state.SetItemsProcessed(state.iterations() * out.num_elements());
  state.SetLabel(std::string(runtime::KernelKindName(plan.kind())));
}

// A STREAM-style pass of `mix` over float arrays holding `bytes` in total.
void BM_Stream(benchmark::State& state, int64_t bytes, StreamMix mix, bool non_temporal) {
  StreamArrays arrays(bytes, mix);
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    arrays.Run(threads, non_temporal);
    benchmark::DoNotOptimize(arrays.c.raw_data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * arrays.bytes());
}

struct OpCase {
  OpKind op;
  DType dtype;
};

void RegisterAll() {
  const OpCase ops[] = {
      {OpKind::kAdd, DType::kFloat32}, {OpKind::kMul, DType::kFloat32},
      {OpKind::kDiv, DType::kFloat32}, {OpKind::kMax, DType::kFloat32},
      {OpKind::kAdd, DType::kInt32},   {OpKind::kAnd, DType::kBool},
  };
  for (const ShapeCase& c : ShapeCases()) {
    for (const OpCase& o : ops) {
      const std::string name =
          absl::StrCat(runtime::OpKindName(o.op), "_", runtime::DTypeName(o.dtype), "/", c.name, "/",
                       absl::StrJoin(c.a, "x"), "+", absl::StrJoin(c.b, "x"));
      benchmark::RegisterBenchmark(name.c_str(), BM_Binary, o.op, o.dtype, c.a, c.b)
          ->ArgName("threads")
          ->Arg(1)
          ->Arg(2)
          ->UseRealTime()
          ->Unit(c.large ? benchmark::kMillisecond : benchmark::kNanosecond);
    }
    if (!c.large) continue;
    // The STREAM add of the issue, and when the case reads less per byte written, a
    // baseline of its own read/write mix (bench_util.h, MatchingMix).
    const int64_t bytes = BytesMoved(c.a, c.b, 4, 4);
    std::vector<StreamMix> mixes = {StreamMix::kAdd};
    const StreamMix own = MatchingMix(c.a, c.b, 4, 4);
    if (own != StreamMix::kAdd) mixes.push_back(own);
    for (StreamMix mix : mixes) {
      for (bool nt : {false, true}) {
        benchmark::RegisterBenchmark(
            absl::StrCat("STREAM_", StreamMixName(mix), nt ? "_nt/" : "/", c.name).c_str(),
            BM_Stream, bytes, mix, nt)
            ->ArgName("threads")
            ->Arg(1)
            ->Arg(2)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace
}  // namespace onnx_bcast::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  onnx_bcast::bench::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
