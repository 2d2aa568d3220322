// bench_graph_phases: the phases of `onnx-bcast check` and `onnx-bcast opt --target explicit`
// timed apart on one model, through the driver the CLI calls: load (mmap, parse, validate, the
// structural checks), the check analysis, the explicit pipeline (its passes and the target
// check), and save. Prints one JSON line; bench/graph/run.py reads it.
//
// Usage: bench_graph_phases MODEL.onnx OUT.onnx
#include <time.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "driver/driver.h"
#include "proto/model_io.h"

namespace {

// Process CPU time: on a shared, loaded machine it varies far less than wall time.
struct Clock {
  struct time_point {
    double wall, cpu;
  };
  static time_point now() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return {std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
                .count(),
            static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec)};
  }
};

struct Span {
  double wall = 0, cpu = 0;
};

// Resident MiB now (VmRSS), so each phase's memory shows beside its time.
double RssMib() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long pages = 0, resident = 0;
  const int got = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return got == 2 ? static_cast<double>(resident) * 4096.0 / (1 << 20) : 0;
}

Span Since(Clock::time_point start) {
  const Clock::time_point end = Clock::now();
  return {end.wall - start.wall, end.cpu - start.cpu};
}

int Fail(const char* what, const absl::Status& s) {
  std::fprintf(stderr, "%s: %s\n", what, std::string(s.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace onnx_bcast;
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_graph_phases MODEL.onnx OUT.onnx\n");
    return 64;
  }
  auto t = Clock::now();
  absl::StatusOr<proto::Model> model = driver::Load(argv[1], proto::Limits());
  if (!model.ok()) return Fail("load", model.status());
  const Span load_s = Since(t);
  const double load_rss = RssMib();

  t = Clock::now();
  absl::StatusOr<driver::CheckOutcome> checked = driver::Check(*model, driver::CheckRequest());
  if (!checked.ok()) return Fail("check", checked.status());
  const Span check_s = Since(t);
  const size_t verdicts = checked->analysis.nodes.size();
  const double check_rss = RssMib();
  checked = absl::InternalError("released");  // as `check` would exit here

  absl::StatusOr<passes::ResolvedPipeline> pipeline = passes::ResolvePipeline({"explicit", "", {}});
  if (!pipeline.ok()) return Fail("opt", pipeline.status());
  report::OptReport report;
  t = Clock::now();
  if (absl::Status s = driver::Optimize(&*model, *pipeline, driver::OptSettings(), &report);
      !s.ok()) {
    return Fail("opt", s);
  }
  const Span opt_s = Since(t);
  const double opt_rss = RssMib();
  // The driver times the target check apart (wall); the phase is single-threaded, so its CPU
  // time is taken to equal its wall time, and the passes get the rest of the measured CPU.
  const Span target_check_s{report.target_check_seconds, report.target_check_seconds};
  const Span passes_s{opt_s.wall - target_check_s.wall, opt_s.cpu - target_check_s.cpu};
  const std::vector<std::string>* violations = &report.violations;
  int64_t rewrites = 0;
  for (const passes::PassRun& run : report.runs) {
    rewrites += run.stats.rewrites;
  }

  t = Clock::now();
  if (absl::Status s = proto::SaveModel(*model, argv[2]); !s.ok()) return Fail("save", s);
  const Span save_s = Since(t);
  const double save_rss = RssMib();

  std::printf(
      "{\"load_s\": %.6f, \"check_s\": %.6f, \"passes_s\": %.6f, \"target_check_s\": %.6f, "
      "\"save_s\": %.6f, \"load_cpu_s\": %.6f, \"check_cpu_s\": %.6f, \"passes_cpu_s\": %.6f, "
      "\"target_check_cpu_s\": %.6f, \"save_cpu_s\": %.6f, \"verdicts\": %zu, "
      "\"rewrites\": %lld, \"violations\": %zu, \"rss_mib\": [%.1f, %.1f, %.1f, %.1f]}\n",
      load_s.wall, check_s.wall, passes_s.wall, target_check_s.wall, save_s.wall, load_s.cpu,
      check_s.cpu, passes_s.cpu, target_check_s.cpu, save_s.cpu, verdicts,
      static_cast<long long>(rewrites), violations->size(), load_rss, check_rss, opt_rss,
      save_rss);
  return 0;
}
