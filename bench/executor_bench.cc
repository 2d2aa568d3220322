// bench_executor: whole-model timings of the runtime executor on the models named on the
// command line (random inputs, symbolic dims 1). Per model, two figures:
//   BM_Steady/<model>: one Run with the same input shapes as the previous run (the per-node
//                      plan cache is warm), i.e. run time per inference;
//   BM_FirstRun/<model>: the first Run of a fresh executor (allocations and plan builds; the
//                      "plans" counter says how many), Create untimed;
//   BM_Cold/<model>:   Executor::Create plus the first Run.
//   BM_KeepOutputs/<model>: BM_Steady for a caller that holds each run's outputs until the
//                      next run has returned (`outs = Run()` in a loop), whose buffers the
//                      executor must not reuse while they are held.
// The steady figures report "faults": minor page faults per run (a buffer allocated afresh
// each run faults its pages in every time: 16K faults for a 64 MB output in 4 KiB pages).
// Usage: bench_executor MODEL.onnx... [--benchmark_* flags]. Not run by ctest.
#include <sys/resource.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "proto/model_io.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"

namespace onnx_bcast::bench {
namespace {

using runtime::Executor;
using runtime::Feeds;
using runtime::Model;
using runtime::Value;

struct Loaded {
  std::shared_ptr<const Model> model;
  Feeds feeds;
};

int64_t MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

void SetFaultsPerRun(benchmark::State& state, int64_t faults_before) {
  state.counters["faults"] = benchmark::Counter(static_cast<double>(MinorFaults() - faults_before),
                                                benchmark::Counter::kAvgIterations);
}

void BM_Steady(benchmark::State& state, const Loaded* loaded) {
  absl::StatusOr<std::unique_ptr<Executor>> exec = Executor::Create(loaded->model);
  if (!exec.ok() || !(*exec)->Run(loaded->feeds).ok()) {
    state.SkipWithError("run failed");
    return;
  }
  const int64_t faults = MinorFaults();
  for (auto _ : state) {
    absl::StatusOr<std::vector<Value>> out = (*exec)->Run(loaded->feeds);
    benchmark::DoNotOptimize(out);
  }
  SetFaultsPerRun(state, faults);
}

void BM_KeepOutputs(benchmark::State& state, const Loaded* loaded) {
  absl::StatusOr<std::unique_ptr<Executor>> exec = Executor::Create(loaded->model);
  if (!exec.ok()) {
    state.SkipWithError("create failed");
    return;
  }
  std::vector<Value> kept;
  for (int warm = 0; warm < 2; ++warm) {
    absl::StatusOr<std::vector<Value>> out = (*exec)->Run(loaded->feeds);
    if (!out.ok()) {
      state.SkipWithError("run failed");
      return;
    }
    kept = *std::move(out);
  }
  const int64_t faults = MinorFaults();
  for (auto _ : state) {
    absl::StatusOr<std::vector<Value>> out = (*exec)->Run(loaded->feeds);
    kept = *std::move(out);  // the previous run's outputs were held during this one
    benchmark::DoNotOptimize(kept);
  }
  SetFaultsPerRun(state, faults);
}

// The first Run of a fresh executor (Create untimed): output allocation plus every node's plan
// build; minus BM_Steady, the plan build time. Reports the plans built per run.
void BM_FirstRun(benchmark::State& state, const Loaded* loaded) {
  int64_t builds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    absl::StatusOr<std::unique_ptr<Executor>> exec = Executor::Create(loaded->model);
    if (!exec.ok()) {
      state.SkipWithError("create failed");
      return;
    }
    state.ResumeTiming();
    absl::StatusOr<std::vector<Value>> out = (*exec)->Run(loaded->feeds);
    benchmark::DoNotOptimize(out);
    state.PauseTiming();
    builds = (*exec)->plan_builds();
    exec->reset();  // destroyed untimed
    state.ResumeTiming();
  }
  state.counters["plans"] = static_cast<double>(builds);
}

void BM_Cold(benchmark::State& state, const Loaded* loaded) {
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<Executor>> exec = Executor::Create(loaded->model);
    if (!exec.ok()) {
      state.SkipWithError("create failed");
      return;
    }
    absl::StatusOr<std::vector<Value>> out = (*exec)->Run(loaded->feeds);
    benchmark::DoNotOptimize(out);
  }
}

}  // namespace
}  // namespace onnx_bcast::bench

int main(int argc, char** argv) {
  using namespace onnx_bcast;  // NOLINT: a benchmark main
  benchmark::Initialize(&argc, argv);
  std::vector<std::unique_ptr<bench::Loaded>> models;
  for (int i = 1; i < argc; ++i) {
    const std::string path = argv[i];
    absl::StatusOr<proto::Model> model = proto::LoadModel(path);
    if (!model.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), std::string(model.status().message()).c_str());
      return 1;
    }
    auto loaded = std::make_unique<bench::Loaded>();
    absl::StatusOr<std::shared_ptr<const runtime::Model>> runtime = runtime::LoadRuntimeModel(*model);
    if (!runtime.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(),
                   std::string(runtime.status().message()).c_str());
      return 1;
    }
    loaded->model = *runtime;
    absl::StatusOr<runtime::Feeds> feeds = runtime::RandomInputs(*loaded->model->main, {});
    if (!feeds.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), std::string(feeds.status().message()).c_str());
      return 1;
    }
    loaded->feeds = *std::move(feeds);
    const std::string name = path.substr(path.find_last_of('/') + 1);
    benchmark::RegisterBenchmark(("BM_Steady/" + name).c_str(), bench::BM_Steady, loaded.get())
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_KeepOutputs/" + name).c_str(), bench::BM_KeepOutputs,
                                 loaded.get())
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_FirstRun/" + name).c_str(), bench::BM_FirstRun, loaded.get())
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_Cold/" + name).c_str(), bench::BM_Cold, loaded.get())
        ->Unit(benchmark::kMicrosecond);
    models.push_back(std::move(loaded));
  }
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
