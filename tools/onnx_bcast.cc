// onnx-bcast: make the broadcast semantics of ONNX models explicit, checked and verified.
// The CLI only parses arguments and calls into the library layers; no logic lives here.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "passes/check_report.h"
#include "passes/opt_report.h"
#include "passes/pass_manager.h"
#include "passes/registry.h"
#include "passes/shape_propagation.h"
#include "passes/targets.h"
#include "proto/model_io.h"
#include "tools/cli.h"

namespace onnx_bcast::cli {
namespace {

struct Command {
  const char* name;
  const char* usage;
  const char* summary;
  std::vector<OptionSpec> options;
  int (*run)(const Command& self, const ParsedArgs& args);
};

const OptionSpec kHelp = {"help", 'h', nullptr, false, "show this help"};

int Usage(const Command& cmd, const std::string& message) {
  PrintError(absl::StrCat("onnx-bcast ", cmd.name, ": ", message, " (see 'onnx-bcast help ",
                          cmd.name, "')"));
  return kExitUsage;
}

absl::StatusOr<proto::Model> Load(const std::string& path) { return proto::LoadModel(path); }

int RunCheck(const Command& cmd, const ParsedArgs& args);
int RunOpt(const Command& cmd, const ParsedArgs& args);
int RunRun(const Command& cmd, const ParsedArgs& args);
int RunVerify(const Command& cmd, const ParsedArgs& args);

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"check", "onnx-bcast check MODEL [options]",
       "infer shapes and give every broadcasting node a verdict",
       {
           {"json", 0, "FILE", false, "write the verdicts as JSON to FILE ('-' for stdout)"},
           {"strict", 0, nullptr, false, "exit 1 also when a condition or unknown remains"},
           {"lint", 0, nullptr, false, "also warn about broadcasts engines interpret differently"},
           {"annotate", 0, nullptr, false, "write the model with inferred value_info (needs -o)"},
           {"output", 'o', "OUT", false, "output model for --annotate"},
           kHelp,
       },
       RunCheck},
      {"opt", "onnx-bcast opt MODEL -o OUT [options]",
       "rewrite broadcasts for a target (with no pass: load and save losslessly)",
       {
           {"output", 'o', "OUT", false, "where to write the rewritten model"},
           {"target", 0, "NAME", false, "a named pipeline (see --list-passes)"},
           {"target-file", 0, "FILE", false, "a target profile file describing an engine"},
           {"passes", 0, "a,b,c", false, "run these passes in order"},
           {"report", 0, "FILE", false, "write a JSON log of every rewrite"},
           {"verify", 0, nullptr, false, "verify the rewritten model against the original"},
           {"verify-each", 0, nullptr, false, "validate the graph after every pass"},
           {"dry-run", 0, nullptr, false, "print what would change, write nothing"},
           {"in-place", 0, nullptr, false, "allow OUT to be MODEL itself"},
           {"external-data", 0, nullptr, false, "save large initializers to OUT.data"},
           {"list-passes", 0, nullptr, false, "list the passes and targets, then exit"},
           {"fold-limit", 0, "BYTES", false,
            "fold a broadcast constant into an initializer up to BYTES (default 4096)"},
           {"debug", 0, nullptr, false, "print every rewrite and why nodes were left alone"},
           kHelp,
       },
       RunOpt},
      {"run", "onnx-bcast run MODEL [options]",
       "execute the model on the reference CPU executor",
       {
           {"test-data", 0, "DIR", true, "inputs input_K.pb, compared with output_K.pb"},
           {"input", 0, "NAME=FILE.pb", true, "bind one input from a TensorProto file"},
           {"dim", 0, "SYMBOL=N", true, "bind a symbolic dim for random inputs"},
           {"seed", 0, "S", false, "seed for random inputs"},
           {"output-dir", 0, "DIR", false, "write outputs as output_K.pb"},
           {"rtol", 0, "R", false, "relative tolerance (default 1e-3)"},
           {"atol", 0, "A", false, "absolute tolerance (default 1e-7)"},
           {"threads", 0, "N", false, "worker threads"},
           {"bench", 0, "N", false, "time N runs after a warm-up"},
           kHelp,
       },
       RunRun},
      {"verify", "onnx-bcast verify ORIGINAL REWRITTEN [options]",
       "prove numerically that two models compute the same outputs",
       {
           {"test-data", 0, "DIR", true, "use these inputs instead of random ones"},
           {"seed", 0, "S", false, "seed for random inputs"},
           {"samples", 0, "K", false, "random input sets (default 3)"},
           {"rtol", 0, "R", false, "relative tolerance"},
           {"atol", 0, "A", false, "absolute tolerance"},
           kHelp,
       },
       RunVerify},
  };
  return kCommands;
}

void PrintTopHelp() {
  std::printf(
      "onnx-bcast %s: make the broadcast semantics of ONNX models explicit, checked and "
      "verified.\n\nUsage: onnx-bcast COMMAND [options]\n\nCommands:\n",
      BCAST_VERSION);
  for (const Command& cmd : Commands()) std::printf("  %-8s %s\n", cmd.name, cmd.summary);
  std::printf(
      "  %-8s %s\n\nRun 'onnx-bcast help COMMAND' for a command's options.\n\n"
      "Exit codes: 0 success; 1 found what it looks for (broadcast error, numeric mismatch);\n"
      "2 model cannot be loaded or is invalid; 3 unsupported; 4 output cannot be written;\n"
      "64 usage error.\n",
      "help", "show help for a command");
}

void PrintCommandHelp(const Command& cmd) {
  std::printf("Usage: %s\n\n%s.\n\nOptions:\n%s", cmd.usage, cmd.summary,
              FormatOptions(cmd.options).c_str());
}

void PrintPassList() {
  std::printf("Passes:\n");
  for (const passes::PassInfo& info : passes::AllPasses()) {
    std::printf("  %-32s %s\n", info.name, info.summary);
  }
  if (passes::AllPasses().empty()) std::printf("  (none yet)\n");
}

// Writes `text` to `path`, or stdout for "-"; false (after printing the error) on failure.
bool WriteText(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return true;
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size()) {
    PrintError(absl::StrCat(path, ": cannot write: ", std::strerror(errno)));
    if (f != nullptr) std::fclose(f);
    return false;
  }
  if (std::fclose(f) != 0) {
    PrintError(absl::StrCat(path, ": cannot write: ", std::strerror(errno)));
    return false;
  }
  return true;
}

int RunCheck(const Command& cmd, const ParsedArgs& args) {
  if (args.positionals.size() != 1) return Usage(cmd, "expects exactly one MODEL");
  if (args.Has("annotate") != args.Has("output")) {
    return Usage(cmd, "--annotate and -o OUT go together");
  }
  const std::string& path = args.positionals[0];
  absl::StatusOr<proto::Model> model = Load(path);
  if (!model.ok()) {
    PrintError(std::string(model.status().message()));
    return LoadExitCode(model.status());
  }
  passes::AnalysisOptions options;
  options.lint = args.Has("lint");
  proto::Model annotated;
  absl::StatusOr<passes::Analysis> analysis = passes::AnalyzeBroadcasts(
      *model, options, args.Has("annotate") ? &annotated.proto : nullptr);
  if (!analysis.ok()) {
    PrintError(absl::StrCat(path, ": ", analysis.status().message()));
    return LoadExitCode(analysis.status());
  }
  const std::string json_path = args.Get("json");
  if (json_path != "-") {
    const std::string text = passes::FormatCheckText(*analysis, path, options.lint);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  if (args.Has("json") &&
      !WriteText(json_path, passes::FormatCheckJson(*analysis, path, options.lint))) {
    return kExitCannotWrite;
  }
  if (args.Has("annotate")) {
    annotated.path = model->path;
    annotated.base_dir = model->base_dir;
    if (absl::Status s = proto::SaveModel(annotated, args.Get("output")); !s.ok()) {
      PrintError(std::string(s.message()));
      return kExitCannotWrite;
    }
  }
  if (analysis->HasError()) return kExitFound;
  if (args.Has("strict") && (analysis->CountVerdict(bcast::Verdict::kConditional) > 0 ||
                             analysis->CountVerdict(bcast::Verdict::kUnknown) > 0)) {
    return kExitFound;
  }
  return kExitOk;
}

int RunOpt(const Command& cmd, const ParsedArgs& args) {
  if (args.Has("list-passes")) {
    PrintPassList();
    std::printf("\nTargets:\n");
    for (const passes::TargetProfile& t : passes::BuiltinTargets()) {
      std::printf("  %-32s %s\n", t.name.c_str(), absl::StrJoin(t.passes, ",").c_str());
    }
    return kExitOk;
  }
  if (args.positionals.size() != 1) return Usage(cmd, "expects exactly one MODEL");
  if (!args.Has("output") && !args.Has("dry-run")) return Usage(cmd, "needs -o OUT");
  if (static_cast<int>(args.Has("target")) + static_cast<int>(args.Has("passes")) +
          static_cast<int>(args.Has("target-file")) >
      1) {
    return Usage(cmd, "give one of --target, --target-file and --passes");
  }
  passes::PipelineOptions options;
  options.verify_each = args.Has("verify-each");
  if (args.Has("fold-limit")) {
    int64_t limit = 0;
    if (absl::Status s = ParseIntOption(args, "fold-limit", &limit); !s.ok()) {
      return Usage(cmd, std::string(s.message()));
    }
    if (limit < 0) return Usage(cmd, "--fold-limit must not be negative");
    options.pass_options.fold_limit_bytes = limit;
  }
  std::vector<std::string> names;
  passes::TargetProfile profile;
  const bool has_target = args.Has("target") || args.Has("target-file");
  if (args.Has("passes")) {
    for (absl::string_view name :
         absl::StrSplit(args.Get("passes"), ',', absl::SkipWhitespace())) {
      names.emplace_back(absl::StripAsciiWhitespace(name));
    }
  } else if (args.Has("target")) {
    const passes::TargetProfile* t = passes::FindTarget(args.Get("target"));
    if (t == nullptr) return Usage(cmd, absl::StrCat("unknown target '", args.Get("target"), "'"));
    profile = *t;
    names = profile.passes;
  } else if (args.Has("target-file")) {
    absl::StatusOr<passes::TargetProfile> t = passes::LoadTargetProfile(args.Get("target-file"));
    if (!t.ok()) {
      PrintError(std::string(t.status().message()));
      return kExitUsage;
    }
    profile = *std::move(t);
    names = profile.passes;
  }
  absl::StatusOr<std::vector<const passes::PassInfo*>> pipeline = passes::ResolvePasses(names);
  if (!pipeline.ok()) return Usage(cmd, std::string(pipeline.status().message()));
  if (has_target) options.pass_options.target = &profile;
  if (args.Has("verify")) {
    PrintError(absl::StrCat(args.positionals[0], ": --verify is not available in this build yet"));
    return kExitUnsupported;
  }
  absl::StatusOr<proto::Model> model = Load(args.positionals[0]);
  if (!model.ok()) {
    PrintError(std::string(model.status().message()));
    return LoadExitCode(model.status());
  }
  passes::OptReport report;
  report.model_path = args.positionals[0];
  report.output_path = args.Has("dry-run") ? "" : args.Get("output");
  report.target = has_target ? profile.name : "";
  report.before = passes::Summarize(model->proto);
  absl::Status status = passes::RunPipeline(&*model, *pipeline, options, &report.runs);
  report.after = passes::Summarize(model->proto);
  if (status.ok() && has_target) {
    absl::StatusOr<std::vector<std::string>> violations =
        passes::FindTargetViolations(*model, profile);
    if (violations.ok()) report.violations = *std::move(violations);
  }
  if (!status.ok()) report.error = std::string(status.message());
  if (!pipeline->empty()) {
    const std::string text =
        passes::FormatOptText(report, args.Has("dry-run") || args.Has("debug"), args.Has("debug"));
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  if (args.Has("report") && !WriteText(args.Get("report"), passes::FormatOptJson(report))) {
    return kExitCannotWrite;
  }
  if (!status.ok()) {
    PrintError(absl::StrCat(args.positionals[0], ": ", status.message()));
    switch (status.code()) {
      case absl::StatusCode::kUnimplemented:
        return kExitUnsupported;
      case absl::StatusCode::kFailedPrecondition:
        return kExitUsage;
      default:
        return kExitBadModel;
    }
  }
  if (args.Has("dry-run")) return kExitOk;
  proto::SaveOptions save;
  save.in_place = args.Has("in-place");
  save.external_data = args.Has("external-data");
  if (absl::Status s = proto::SaveModel(*model, args.Get("output"), save); !s.ok()) {
    PrintError(std::string(s.message()));
    return kExitCannotWrite;
  }
  return kExitOk;
}

int NotYet(const Command& cmd, const ParsedArgs& args) {
  if (args.positionals.empty()) return Usage(cmd, "expects a MODEL");
  for (const std::string& path : args.positionals) {
    absl::StatusOr<proto::Model> model = Load(path);
    if (!model.ok()) {
      PrintError(std::string(model.status().message()));
      return LoadExitCode(model.status());
    }
  }
  PrintError(absl::StrCat(args.positionals[0], ": '", cmd.name,
                          "' is not available in this build yet"));
  return kExitUnsupported;
}

int RunRun(const Command& cmd, const ParsedArgs& args) { return NotYet(cmd, args); }

int RunVerify(const Command& cmd, const ParsedArgs& args) {
  if (args.positionals.size() != 2) return Usage(cmd, "expects ORIGINAL and REWRITTEN");
  return NotYet(cmd, args);
}

const Command* FindCommand(const std::string& name) {
  for (const Command& cmd : Commands()) {
    if (name == cmd.name) return &cmd;
  }
  return nullptr;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    PrintTopHelp();
    return kExitUsage;
  }
  const std::string& first = args[0];
  if (first == "--help" || first == "-h") {
    PrintTopHelp();
    return kExitOk;
  }
  if (first == "--version") {
    std::printf("onnx-bcast %s\n", BCAST_VERSION);
    return kExitOk;
  }
  if (first == "help") {
    if (args.size() == 1) {
      PrintTopHelp();
      return kExitOk;
    }
    const Command* cmd = FindCommand(args[1]);
    if (cmd == nullptr) {
      PrintError(absl::StrCat("onnx-bcast: unknown command '", args[1], "'"));
      return kExitUsage;
    }
    PrintCommandHelp(*cmd);
    return kExitOk;
  }
  const Command* cmd = FindCommand(first);
  if (cmd == nullptr) {
    PrintError(absl::StrCat("onnx-bcast: unknown command '", first, "' (see 'onnx-bcast --help')"));
    return kExitUsage;
  }
  ParsedArgs parsed;
  if (absl::Status s = ParseArgs({args.begin() + 1, args.end()}, cmd->options, &parsed);
      !s.ok()) {
    return Usage(*cmd, std::string(s.message()));
  }
  if (parsed.Has("help")) {
    PrintCommandHelp(*cmd);
    return kExitOk;
  }
  return cmd->run(*cmd, parsed);
}

}  // namespace
}  // namespace onnx_bcast::cli

int main(int argc, char** argv) { return onnx_bcast::cli::Main(argc, argv); }
