// `onnx-bcast probe-engine ENGINE`: generates the probe grid, runs it on the engine (children)
// and on our executor, and writes the table and the target profile (engines/engine_probe.h).
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engines/engine_probe.h"
#include "engines/registry.h"
#include "tools/common_options.h"
#include "tools/outputs.h"

namespace onnx_bcast::tools {
namespace {

struct ProbeEngineArgs : CommonArgs {
  std::optional<std::string> table;
  std::optional<std::string> profile_out;  // the target profile written
  std::optional<std::string> out_dir;
  std::optional<int64_t> parallel;
};

void DeclareProbeEngine(CommandLine* cl, ProbeEngineArgs* a) {
  cl->Option("--out-dir", "DIR",
             "write DIR/engines-<engine>-<version>.md and DIR/<engine>-<version>.profile",
             &a->out_dir);
  cl->Option("--table", "FILE", "write the Markdown table to FILE ('-': stdout)", &a->table);
  cl->Option("--profile", "FILE", "write the target profile to FILE ('-': stdout)",
             &a->profile_out);
  cl->Option("--parallel", "N", "engine children at once (default 2)", &a->parallel);
  DeclareQuiet(cl, a);
}

// The command line's mistakes, before the engine is touched.
std::optional<int> CheckProbeArgs(const Command& cmd, const ProbeEngineArgs& args,
                                  engines::ProbeOptions* options) {
  if (args.positionals.size() != 1) {
    return Usage(cmd, absl::StrCat("expects exactly one ENGINE (built in: ",
                                   absl::StrJoin(engines::EngineNames(), ", "), ")"));
  }
  if (args.out_dir && (args.table || args.profile_out)) {
    return Usage(cmd, "--out-dir names both files: drop --table and --profile");
  }
  if (args.table == kStdio && args.profile_out == kStdio) {
    return Usage(cmd, "--table - and --profile - both want stdout");
  }
  if (args.parallel) {
    if (*args.parallel < 1 || *args.parallel > kMaxThreads) {
      return Usage(cmd, absl::StrCat("--parallel must be in 1..", kMaxThreads));
    }
    options->parallel = static_cast<int>(*args.parallel);
  }
  return std::nullopt;
}

// The table and the profile, where the command line asked for them.
int WriteProbeFiles(const ProbeEngineArgs& args, const engines::ProbeReport& report) {
  std::string table_path = args.table.value_or("");
  std::string profile_path = args.profile_out.value_or("");
  if (args.out_dir) {
    table_path = absl::StrCat(*args.out_dir, "/engines-", report.Label(), ".md");
    profile_path = absl::StrCat(*args.out_dir, "/", report.Label(), ".profile");
  }
  const absl::StatusOr<proto::InputFiles> no_inputs = proto::InputFiles{};
  if (!table_path.empty() &&
      !SideOutput().Write(table_path, engines::FormatProbeTable(report), no_inputs)) {
    return kExitCannotWrite;
  }
  if (!profile_path.empty() &&
      !SideOutput().Write(profile_path, engines::FormatProbeProfile(report), no_inputs)) {
    return kExitCannotWrite;
  }
  return kExitOk;
}

void PrintProbeSummary(const engines::ProbeReport& report, const std::string& name,
                       const std::string& version, double seconds) {
  std::fprintf(stderr,
               "%s %s: %zu cells in %.1f s: %lld runs-and-matches, %lld refused, %lld wrong, "
               "%lld crashed\n",
               name.c_str(), version.c_str(), report.cells.size(), seconds,
               static_cast<long long>(report.Count(engines::CellResult::kRunsAndMatches)),
               static_cast<long long>(report.Count(engines::CellResult::kRefused)),
               static_cast<long long>(report.Count(engines::CellResult::kWrong)),
               static_cast<long long>(report.Count(engines::CellResult::kCrashed)));
}

int RunProbeEngine(const Command& cmd, const ProbeEngineArgs& args) {
  engines::ProbeOptions options;
  if (std::optional<int> exit = CheckProbeArgs(cmd, args, &options)) return *exit;
  absl::StatusOr<engines::EngineFactory> factory = engines::FindEngine(args.positionals[0]);
  if (!factory.ok()) return Usage(cmd, std::string(factory.status().message()));
  // The name and version are read once here; every load and run happens in a child.
  absl::StatusOr<std::unique_ptr<engines::EngineAdapter>> engine = (*factory)();
  if (!engine.ok()) {
    PrintError(std::string(engine.status().message()));
    return kExitUnsupported;
  }
  const std::string name = (*engine)->name();
  const std::string version = (*engine)->version();
  const std::string build = (*engine)->build();
  engine->reset();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<engines::ProbeReport> report =
      engines::ProbeEngine(*factory, name, version, options);
  if (!report.ok()) {
    PrintError(absl::StrCat("probe-engine ", name, ": ", report.status().message()));
    return kExitUnsupported;
  }
  report->build = build;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (const int code = WriteProbeFiles(args, *report); code != kExitOk) return code;
  if (!args.quiet) PrintProbeSummary(*report, name, version, seconds);
  return kExitOk;
}

}  // namespace

const Command& ProbeEngineCommand() {
  static const Command kCommand = {
      "probe-engine",
      "onnx-bcast probe-engine ENGINE [--out-dir DIR | --table FILE --profile FILE]",
      "measure which broadcast forms an inference engine runs: a table and a target profile",
      CommandMain<ProbeEngineArgs, DeclareProbeEngine, RunProbeEngine>,
      CommandHelp<ProbeEngineArgs, DeclareProbeEngine>};
  return kCommand;
}

}  // namespace onnx_bcast::tools
