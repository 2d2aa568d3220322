// onnx-bcast: make the broadcast semantics of ONNX models explicit, checked and verified.
// The CLI only parses arguments and calls into the library layers; no logic lives here.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analysis/dim_evaluation.h"
#include "analysis/shape_propagation.h"
#include "driver/driver.h"
#include "driver/opt_text.h"
#include "engines/engine_probe.h"
#include "engines/engine_verify.h"
#include "engines/live_probe.h"
#include "engines/registry.h"
#include "passes/pass_manager.h"
#include "passes/registry.h"
#include "proto/graph_structure.h"
#include "proto/model_io.h"
#include "proto/safe_write.h"
#include "report/check_report.h"
#include "report/check_set_report.h"
#include "report/opt_report.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/input_check.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/profile.h"
#include "runtime/exec/random_inputs.h"
#include "runtime/exec/test_data.h"
#include "targets/targets.h"
#include "tools/check_set.h"
#include "tools/cli.h"
#include "tools/progress.h"
#include "verify/inputs.h"
#include "verify/verify.h"
#ifdef BCAST_WITH_MIMALLOC
#include <mimalloc.h>
#endif

namespace onnx_bcast::cli {
namespace {

// Everything a command line can say, filled by CommandLine::Parse. Each command declares (and
// so accepts) only its own options; the others keep these defaults.
struct Args {
  std::vector<std::string> positionals;  // MODEL, or ORIGINAL and REWRITTEN
  bool help = false;
  bool quiet = false;
  bool progress = false;
  // Resource limits, every command; unset ones keep proto::Limits' defaults (see LimitsFrom).
  std::optional<int64_t> max_file_bytes;
  std::optional<int64_t> max_nodes;
  std::optional<int64_t> max_tensor_elements;
  std::optional<int64_t> max_nesting;
  std::optional<int64_t> max_function_inlines;
  // Outputs ("-": stdout), and opt's report that verify reads.
  std::optional<std::string> output;
  std::optional<std::string> json;
  std::optional<std::string> report;
  std::optional<std::string> output_dir;
  // check
  bool verbose = false;
  bool strict = false;
  bool lint = false;
  bool annotate = false;
  // check over many models
  std::optional<int64_t> jobs;
  std::optional<std::string> junit;
  std::optional<std::string> sarif;
  std::optional<std::string> baseline;
  std::vector<std::string> dims;          // check, opt and run: SYMBOL=N
  std::vector<std::string> input_shapes;  // opt: NAME=d0,d1,...
  // opt
  std::string target;
  std::string target_file;
  std::optional<std::string> passes;
  std::optional<int64_t> fold_limit;
  bool verify = false;
  bool verify_engine = false;
  bool verify_each = false;
  bool dry_run = false;
  bool in_place = false;
  bool external_data = false;
  bool list_passes = false;
  bool debug = false;
  bool allow_partial = false;
  bool no_live_probe = false;
  std::optional<std::string> probe_cache;
  // run and verify
  std::vector<std::string> test_data;
  std::vector<std::string> inputs;  // run: NAME=FILE.pb
  int64_t seed = 0;
  int64_t threads = 1;
  int64_t bench = 0;
  bool profile = false;                     // run: per-op and per-node times as text
  std::optional<std::string> profile_json;  // run: the same as JSON ('-': stdout)
  int64_t samples = 3;
  std::optional<double> rtol;
  std::optional<double> atol;
  std::optional<double> timeout;
  std::optional<int64_t> max_memory;  // run, verify: bytes the runs may hold
  bool edge_cases = false;
  bool local = false;
  // probe-engine
  std::optional<std::string> table;
  std::optional<std::string> profile_out;  // the target profile written
  std::optional<std::string> out_dir;
  std::optional<int64_t> parallel;
};

struct Command {
  const char* name;
  const char* usage;
  const char* summary;
  void (*declare)(CommandLine* command_line, Args* args);  // its own options, in --help's order
  int (*run)(const Command& self, const Args& args);
};

// Progress (step lines with timings) is shown on stderr when it is a terminal; these turn it
// off, or on for a log. check's --quiet has its own entry: it also shortens the report.
void DeclareQuiet(CommandLine* cl, Args* a) {
  cl->Flag("-q,--quiet", "no progress display on stderr", &a->quiet);
}
void DeclareProgress(CommandLine* cl, Args* a) {
  cl->Flag("--progress", "show progress on stderr even when it is not a terminal", &a->progress);
}

// Resource limits every subcommand accepts (hostile models are refused with exit 2 before
// they can exhaust memory); defaults admit every real model. Then --help, last in the list.
void DeclareShared(CommandLine* cl, Args* a) {
  cl->Option("--max-file-bytes", "N", "refuse model files larger than N bytes (default 2 GiB - 1)",
             &a->max_file_bytes);
  cl->Option("--max-nodes", "N", "refuse models with more than N nodes (default 20000000)",
             &a->max_nodes);
  cl->Option("--max-tensor-elements", "N",
             "refuse tensors (declared or computed) with more than N elements (default 2^32 at "
             "run)",
             &a->max_tensor_elements);
  cl->Option("--max-nesting", "N", "refuse messages nested deeper than N (default 100)",
             &a->max_nesting);
  cl->Option("--max-function-inlines", "N",
             "refuse models whose function calls expand to more than N inlined calls (default "
             "100000)",
             &a->max_function_inlines);
  cl->Flag("-h,--help", "show this help", &a->help);
}

// Upper bounds of --threads (one OS thread each) and verify's --samples (all held at once):
// far above any useful value, far below what exhausts the process.
constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kMaxSamples = 100000;

int Usage(const Command& cmd, const std::string& message) {
  PrintError(absl::StrCat("onnx-bcast ", cmd.name, ": ", message, " (see 'onnx-bcast help ",
                          cmd.name, "')"));
  return kExitUsage;
}

// The limits given on the command line; a usage error for a non-positive value.
absl::StatusOr<proto::Limits> LimitsFrom(const Args& args) {
  proto::Limits limits;
  limits.max_file_bytes = args.max_file_bytes.value_or(limits.max_file_bytes);
  limits.max_nodes = args.max_nodes.value_or(limits.max_nodes);
  limits.max_tensor_elements = args.max_tensor_elements.value_or(limits.max_tensor_elements);
  limits.max_function_inlines = args.max_function_inlines.value_or(limits.max_function_inlines);
  const int64_t nesting = args.max_nesting.value_or(limits.max_nesting);
  if (limits.max_file_bytes <= 0 || limits.max_nodes <= 0 || limits.max_tensor_elements <= 0 ||
      limits.max_function_inlines <= 0 || nesting <= 0 || nesting > 10000) {
    return absl::InvalidArgumentError("limits must be positive (and --max-nesting <= 10000)");
  }
  limits.max_nesting = static_cast<int>(nesting);
  return limits;
}

absl::StatusOr<proto::Model> Load(const std::string& path, const Args& args,
                                  passes::ProgressSink* progress) {
  // Limits validated in Main before any command runs.
  return driver::Load(path, *LimitsFrom(args), progress);
}

std::unique_ptr<passes::ProgressSink> MakeProgress(const Args& args) {
  return cli::MakeProgress(args.quiet, args.progress);
}

// --timeout: wall-clock seconds for the executions of run and verify; a Loop with a huge trip
// count or a kernel that would run for hours ends with exit 2 instead of hanging CI.
constexpr double kDefaultTimeoutSeconds = 600;
absl::StatusOr<double> TimeoutFrom(const Args& args) {
  const double seconds = args.timeout.value_or(kDefaultTimeoutSeconds);
  if (!(seconds >= 0) || seconds > 1e9) {
    return absl::InvalidArgumentError("--timeout must be between 0 (no limit) and 1e9 seconds");
  }
  return seconds;
}

void DeclareCheck(CommandLine* cl, Args* a) {
  cl->Option("--json", "FILE",
             "write the verdicts as JSON to FILE ('-': stdout, the text report then goes to "
             "stderr)",
             &a->json);
  cl->Flag("-q,--quiet", "print only the summary line (and no progress)", &a->quiet);
  cl->Flag("-v,--verbose", "also list every broadcasting node by class (ok ones included)",
           &a->verbose);
  cl->Flag("--strict", "exit 1 also when a condition or unknown remains", &a->strict);
  cl->Repeated("--dim", "SYMBOL=N",
               "evaluate at this value of a symbolic dim: exit 1 naming the first node that "
               "fails there, 0 when every node holds",
               &a->dims);
  cl->Flag("--lint", "also warn about broadcasts engines interpret differently", &a->lint);
  cl->Flag("--annotate", "write the model with inferred value_info (needs -o)", &a->annotate);
  cl->Option("-o,--output", "OUT", "output model for --annotate", &a->output);
  cl->Option("-j,--jobs", "N",
             "with several models (or a folder): check N at a time (default: the cores)", &a->jobs);
  cl->Option("--junit", "FILE", "write JUnit XML: one testcase per model ('-': stdout)", &a->junit);
  cl->Option("--sarif", "FILE", "write SARIF 2.1.0: one result per finding ('-': stdout)",
             &a->sarif);
  cl->Option("--baseline", "FILE",
             "a previous --json of the same models: findings already in it do not count toward "
             "the exit code (new findings and new models do)",
             &a->baseline);
  DeclareProgress(cl, a);
}

void DeclareOpt(CommandLine* cl, Args* a) {
  cl->Option("-o,--output", "OUT",
             "where to write the rewritten model ('-': stdout, the text then goes to stderr)",
             &a->output);
  cl->Option("--target", "NAME", "a named pipeline (default explicit; see --list-passes)",
             &a->target);
  cl->Option("--target-file", "FILE", "a target profile file describing an engine",
             &a->target_file);
  cl->Option("--passes", "a,b,c",
             "run these passes in order ('none': only load, validate and save losslessly)",
             &a->passes);
  cl->Option("--report", "FILE",
             "write a JSON log of every rewrite ('-': stdout, the text then goes to stderr)",
             &a->report);
  cl->Flag("--verify", "verify the rewritten model against the original", &a->verify);
  cl->Flag("--verify-engine",
           "load and run the written model on the target's engine itself (in a child) and "
           "compare with the original at the bound dims: one line, and \"engine\" in --report",
           &a->verify_engine);
  cl->Flag("--verify-each",
           "after every pass, validate the graph and compare the kept shape tables with a "
           "fresh analysis",
           &a->verify_each);
  cl->Flag("--dry-run", "print what would change, write nothing", &a->dry_run);
  cl->Flag("--in-place", "write the result back to MODEL (no -o needed)", &a->in_place);
  cl->Flag("--external-data", "save large initializers to OUT.data", &a->external_data);
  cl->Flag("--list-passes", "list the passes and targets, then exit", &a->list_passes);
  cl->Repeated("--dim", "SYMBOL=N",
               "bind a symbolic dim before the passes (or several: H=640,W=640): the written "
               "model has that number there; exit 1 naming the node when a broadcast fails at "
               "it",
               &a->dims);
  cl->Repeated("--input-shape", "NAME=d0,d1,...",
               "bind every dim of graph input NAME, named or not", &a->input_shapes);
  cl->Option("--fold-limit", "BYTES",
             "largest constant a pass writes: a broadcast folded into an initializer (default "
             "4096) and a result of fold-constants (default 1 MiB)",
             &a->fold_limit);
  cl->Flag("--debug", "print every rewrite and why nodes were left alone", &a->debug);
  cl->Flag("--allow-partial",
           "write OUT even when some nodes cannot be put into the target's form (they are "
           "listed on stderr; exit 0); without it such a model is not written (exit 3)",
           &a->allow_partial);
  cl->Flag("--no-live-probe",
           "decide forms by the target's table only; by default, when this build has the "
           "target's engine, each broadcasting node and candidate rewrite is run on it at its "
           "exact shapes (in a child process) and compared with the bundled executor",
           &a->no_live_probe);
  cl->Option("--probe-cache", "DIR",
             "keep the live probes' results in DIR (one small file per form) across runs",
             &a->probe_cache);
  DeclareQuiet(cl, a);
  DeclareProgress(cl, a);
}

// --max-memory: the bytes the executions of run and verify may hold at once, checked before
// each intermediate is allocated and before a Loop or Scan stacks its scan outputs.
void DeclareMaxMemory(CommandLine* cl, Args* a) {
  cl->Option("--max-memory", "BYTES",
             "stop with exit 2 before the run holds more than BYTES (default a quarter of "
             "physical memory)",
             &a->max_memory);
}
absl::StatusOr<int64_t> MaxMemoryFrom(const Args& args) {
  const int64_t bytes = args.max_memory.value_or(rt::DefaultMaxMemoryBytes());
  if (bytes <= 0) return absl::InvalidArgumentError("--max-memory must be positive");
  return bytes;
}

void DeclareRun(CommandLine* cl, Args* a) {
  cl->Repeated("--test-data", "DIR", "inputs input_K.pb, compared with output_K.pb", &a->test_data);
  cl->Repeated("--input", "NAME=FILE.pb", "bind one input from a TensorProto file", &a->inputs);
  cl->Repeated("--dim", "SYMBOL=N",
               "bind a symbolic dim: sizes random inputs (default 1, printed on stderr); given "
               "inputs must agree (exit 65)",
               &a->dims);
  cl->Option("--seed", "S", "seed for random inputs (default 0)", &a->seed);
  cl->Option("--output-dir", "DIR", "write outputs as output_K.pb", &a->output_dir);
  cl->Option("--rtol", "R", "relative tolerance (default 1e-3)", &a->rtol);
  cl->Option("--atol", "A", "absolute tolerance (default 1e-7)", &a->atol);
  cl->Option("--threads", "N", "threads per kernel (default 1)", &a->threads);
  cl->Option("--bench", "N", "time N runs after a warm-up, print one bench: line", &a->bench);
  // Two options rather than one with an optional value: `--profile MODEL` would take MODEL as
  // the file.
  cl->Flag("--profile",
           "print where the time goes: per op type and the slowest nodes, with shares (over the "
           "--bench runs when given, else the one run, which includes planning)",
           &a->profile);
  cl->Option("--profile-json", "FILE", "write the profile as JSON ('-': stdout)", &a->profile_json);
  cl->Option("--timeout", "SECONDS",
             "stop with exit 2 after SECONDS of execution (default 600, 0: no limit)", &a->timeout);
  DeclareMaxMemory(cl, a);
  DeclareQuiet(cl, a);
  DeclareProgress(cl, a);
}

void DeclareVerify(CommandLine* cl, Args* a) {
  cl->Repeated("--test-data", "DIR", "use these inputs instead of random ones", &a->test_data);
  cl->Option("--seed", "S", "seed for random inputs (default 0)", &a->seed);
  cl->Repeated("--dim", "SYMBOL=N",
               "bind a symbolic dim in every sample (or several: N=1,T=4); dims one model "
               "declares as numbers are bound without it",
               &a->dims);
  cl->Option("--samples", "K",
             "random input sets (default 3): symbols 1 where the broadcast condition allows, "
             "then distinct values > 1 that satisfy it",
             &a->samples);
  cl->Flag("--edge-cases",
           "add a sample with every symbol bound to 0 (empty tensors) and one outside the "
           "broadcast condition, where both models must fail",
           &a->edge_cases);
  cl->Option("--rtol", "R",
             "relative tolerance (default: bit-exact when only exact ops changed, else 1e-3)",
             &a->rtol);
  cl->Option("--atol", "A", "absolute tolerance (default 1e-7)", &a->atol);
  cl->Flag("--local", "check node by node instead of running whole models", &a->local);
  cl->Option("--report", "FILE",
             "the opt --report of the rewrite, to name the pass (an unreadable one is an error)",
             &a->report);
  cl->Option("--json", "FILE",
             "write the result as JSON to FILE ('-': stdout, the text report then goes to "
             "stderr)",
             &a->json);
  cl->Option("--threads", "N", "threads per kernel (default 1)", &a->threads);
  cl->Option("--timeout", "SECONDS",
             "stop with exit 2 after SECONDS of execution (default 600, 0: no limit)", &a->timeout);
  DeclareMaxMemory(cl, a);
  DeclareQuiet(cl, a);
  DeclareProgress(cl, a);
}

void DeclareProbeEngine(CommandLine* cl, Args* a) {
  cl->Option("--out-dir", "DIR",
             "write DIR/engines-<engine>-<version>.md and DIR/<engine>-<version>.profile",
             &a->out_dir);
  cl->Option("--table", "FILE", "write the Markdown table to FILE ('-': stdout)", &a->table);
  cl->Option("--profile", "FILE", "write the target profile to FILE ('-': stdout)",
             &a->profile_out);
  cl->Option("--parallel", "N", "engine children at once (default 2)", &a->parallel);
  DeclareQuiet(cl, a);
}

int RunCheck(const Command& cmd, const Args& args);
int RunProbeEngine(const Command& cmd, const Args& args);
int RunOpt(const Command& cmd, const Args& args);
int RunRun(const Command& cmd, const Args& args);
int RunVerify(const Command& cmd, const Args& args);

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"check",
       "onnx-bcast check MODEL|DIR ... [options]   (MODEL '-': read stdin; a DIR is searched "
       "for *.onnx, *.onnxtxt)",
       "infer shapes and give every broadcasting node a verdict", DeclareCheck, RunCheck},
      {"opt", "onnx-bcast opt MODEL -o OUT [options]   (MODEL '-': stdin; OUT '-': stdout)",
       "rewrite broadcasts for a target (default: explicit; --passes none: load and save)",
       DeclareOpt, RunOpt},
      {"run", "onnx-bcast run MODEL [options]   (MODEL '-': read stdin)",
       "execute the model on the reference CPU executor", DeclareRun, RunRun},
      {"verify", "onnx-bcast verify ORIGINAL REWRITTEN [options]   (one of them may be '-': stdin)",
       "prove numerically that two models compute the same outputs", DeclareVerify, RunVerify},
      {"probe-engine",
       "onnx-bcast probe-engine ENGINE [--out-dir DIR | --table FILE --profile FILE]",
       "measure which broadcast forms an inference engine runs: a table and a target profile",
       DeclareProbeEngine, RunProbeEngine},
  };
  return kCommands;
}

// The command line of `cmd`: its own options, then the limits and --help every command shares.
void DeclareAll(const Command& cmd, CommandLine* command_line, Args* args) {
  cmd.declare(command_line, args);
  DeclareShared(command_line, args);
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
      "2 model cannot be loaded or is invalid; 3 unsupported (opt: a node not put into the\n"
      "target's form, nothing written); 4 output cannot be written;\n"
      "64 usage error; 65 an input given to run does not fit the model's declared type or\n"
      "shape (or binds a symbol unlike another input or --dim).\n",
      "help", "show help for a command");
}

void PrintCommandHelp(const CommandLine& command_line) {
  std::printf("%s", command_line.Help().c_str());
}

void PrintPassList() {
  std::printf("Passes:\n");
  for (const passes::PassInfo& info : passes::AllPasses()) {
    std::printf("  %-32s %s\n", info.name, info.summary);
  }
  if (passes::AllPasses().empty()) std::printf("  (none yet)\n");
}

// A side output (--json, --report): staged as soon as its text is known (the destination
// checked and the text written to a temporary beside it, or held for stdout for "-"), committed
// only once the command's main output is in place. A command that fails after staging (the
// model cannot be saved, a target is not met) leaves no report behind: the temporary is removed
// when the SideOutput goes. The file is never written onto a link, a non-regular file or one of
// the command's inputs.
class SideOutput {
 public:
  // False (after printing the error) when the destination is refused or cannot be written.
  bool Stage(const std::string& path, std::string text,
             const absl::StatusOr<proto::InputFiles>& inputs) {
    path_ = path;
    if (path == "-") {
      stdout_text_ = std::move(text);
      return true;
    }
    absl::StatusOr<proto::StagedOutputFiles> staged =
        inputs.ok()
            ? proto::StagedOutputFiles::Stage({proto::OutputFile{path, std::move(text)}}, *inputs)
            : absl::StatusOr<proto::StagedOutputFiles>(inputs.status());
    if (!staged.ok()) {
      PrintError(inputs.ok() ? std::string(staged.status().message())
                             : absl::StrCat(path, ": cannot write: ", staged.status().message()));
      return false;
    }
    file_ = *std::move(staged);
    return true;
  }
  // False (after printing the error) when the rename fails. Nothing staged: nothing to do.
  bool Commit() {
    if (stdout_text_.has_value()) {
      std::fwrite(stdout_text_->data(), 1, stdout_text_->size(), stdout);
      stdout_text_.reset();
      return true;
    }
    if (absl::Status s = file_.Commit(); !s.ok()) {
      PrintError(std::string(s.message()));
      return false;
    }
    return true;
  }
  // Stage and Commit at once, for a side output that is the command's last write.
  bool Write(const std::string& path, std::string text,
             const absl::StatusOr<proto::InputFiles>& inputs) {
    return Stage(path, std::move(text), inputs) && Commit();
  }

 private:
  std::string path_;
  std::optional<std::string> stdout_text_;
  proto::StagedOutputFiles file_;
};

// True when `a` and `b` name one file (lexically, after resolving what exists): a side output
// and the main output must differ, or one would replace the other.
bool SamePath(const std::string& a, const std::string& b) {
  if (a == kStdio || b == kStdio) return false;
  std::error_code ec_a, ec_b;
  const std::filesystem::path pa = std::filesystem::weakly_canonical(a, ec_a);
  const std::filesystem::path pb = std::filesystem::weakly_canonical(b, ec_b);
  if (ec_a || ec_b) return a == b;
  return pa == pb;
}

// `-o -`: the model's bytes on stdout (a model with external data needs a file).
absl::Status WriteModelToStdout(const proto::Model& model) {
  absl::StatusOr<std::string> bytes = proto::SerializeForStream(model);
  if (!bytes.ok()) return bytes.status();
  if (std::fwrite(bytes->data(), 1, bytes->size(), stdout) != bytes->size() ||
      std::fflush(stdout) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot write to stdout: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// Generates the probe grid, runs it on the engine (children) and on our executor, and writes
// the table and the profile.
int RunProbeEngine(const Command& cmd, const Args& args) {
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
  driver::ProbeOptions options;
  if (args.parallel) {
    if (*args.parallel < 1 || *args.parallel > kMaxThreads) {
      return Usage(cmd, absl::StrCat("--parallel must be in 1..", kMaxThreads));
    }
    options.parallel = static_cast<int>(*args.parallel);
  }
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
  absl::StatusOr<driver::ProbeReport> report =
      driver::ProbeEngine(*factory, name, version, options);
  if (!report.ok()) {
    PrintError(absl::StrCat("probe-engine ", name, ": ", report.status().message()));
    return kExitUnsupported;
  }
  report->build = build;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string table_path = args.table.value_or("");
  std::string profile_path = args.profile_out.value_or("");
  if (args.out_dir) {
    table_path = absl::StrCat(*args.out_dir, "/engines-", report->Label(), ".md");
    profile_path = absl::StrCat(*args.out_dir, "/", report->Label(), ".profile");
  }
  const absl::StatusOr<proto::InputFiles> no_inputs = proto::InputFiles{};
  if (!table_path.empty() &&
      !SideOutput().Write(table_path, driver::FormatProbeTable(*report), no_inputs)) {
    return kExitCannotWrite;
  }
  if (!profile_path.empty() &&
      !SideOutput().Write(profile_path, driver::FormatProbeProfile(*report), no_inputs)) {
    return kExitCannotWrite;
  }
  if (!args.quiet) {
    std::fprintf(stderr,
                 "%s %s: %zu cells in %.1f s: %lld runs-and-matches, %lld refused, %lld wrong, "
                 "%lld crashed\n",
                 name.c_str(), version.c_str(), report->cells.size(), seconds,
                 static_cast<long long>(report->Count(driver::CellResult::kRunsAndMatches)),
                 static_cast<long long>(report->Count(driver::CellResult::kRefused)),
                 static_cast<long long>(report->Count(driver::CellResult::kWrong)),
                 static_cast<long long>(report->Count(driver::CellResult::kCrashed)));
  }
  return kExitOk;
}

// --dim SYMBOL=N values (check, opt), each flag one binding or a comma list of them
// ("H=640,W=640"), parsed before the model is read: a malformed one is a usage error whatever
// the model. The names are checked against the model's symbols once it is analyzed.
absl::Status ParseDimSpecs(const std::vector<std::string>& specs,
                           std::map<std::string, int64_t>* dims) {
  for (const std::string& list : specs) {
    for (absl::string_view spec : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
      std::pair<std::string, std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
      absl::StripAsciiWhitespace(&kv.first);
      absl::StripAsciiWhitespace(&kv.second);
      int64_t n = 0;
      if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &n) || n < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("--dim expects SYMBOL=N with N >= 1, got '", spec, "'"));
      }
      if (dims->count(kv.first) > 0 && (*dims)[kv.first] != n) {
        return absl::InvalidArgumentError(absl::StrCat("--dim ", kv.first, " is given twice"));
      }
      (*dims)[kv.first] = n;
    }
  }
  return absl::OkStatus();
}

// --input-shape NAME=d0,d1,... (opt), one graph input per flag.
absl::Status ParseInputShapeSpecs(const std::vector<std::string>& specs,
                                  proto::InputShapes* shapes) {
  for (const std::string& spec : specs) {
    std::pair<std::string, std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    std::vector<int64_t> extents;
    bool ok = !kv.first.empty() && !kv.second.empty();
    for (absl::string_view d : absl::StrSplit(kv.second, ',')) {
      int64_t n = 0;
      ok = ok && absl::SimpleAtoi(d, &n) && n >= 1;
      extents.push_back(n);
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape expects NAME=d0,d1,... with every d >= 1, got '", spec, "'"));
    }
    if (shapes->count(kv.first) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape ", kv.first, " is given twice"));
    }
    (*shapes)[kv.first] = std::move(extents);
  }
  return absl::OkStatus();
}

// check over a set of models: each in a child of this binary, reports aggregated (issue 25).
int RunCheckSet(const Command& cmd, const Args& args) {
  if (args.annotate || args.output.has_value()) {
    return Usage(cmd, "--annotate and -o take one MODEL, not several");
  }
  if (args.verbose) return Usage(cmd, "--verbose takes one MODEL; --json holds every node");
  for (const std::string& p : args.positionals) {
    if (p == kStdio) return Usage(cmd, "'-' (stdin) takes one MODEL, not several");
  }
  int stdout_users = 0;
  for (const auto* out : {&args.json, &args.junit, &args.sarif}) stdout_users += *out == kStdio;
  if (stdout_users > 1) return Usage(cmd, "only one of --json, --junit, --sarif can be '-'");
  const int64_t cores = std::max<int64_t>(1, ::sysconf(_SC_NPROCESSORS_ONLN));
  const int64_t jobs = args.jobs.value_or(cores);
  if (jobs < 1 || jobs > kMaxThreads) {
    return Usage(cmd, absl::StrCat("--jobs must be between 1 and ", kMaxThreads));
  }
  std::map<std::string, int64_t> dims;
  if (absl::Status s = ParseDimSpecs(args.dims, &dims); !s.ok()) {
    return Usage(cmd, std::string(s.message()));
  }
  std::optional<passes::Baseline> baseline;
  if (args.baseline.has_value()) {
    absl::StatusOr<std::string> text = proto::ReadFileBytes(*args.baseline, int64_t{1} << 30);
    if (!text.ok()) {
      PrintError(absl::StrCat(*args.baseline, ": ", text.status().message()));
      return kExitUsage;
    }
    absl::StatusOr<passes::Baseline> parsed = passes::ParseBaseline(*text);
    if (!parsed.ok()) {
      PrintError(absl::StrCat(*args.baseline, ": ", parsed.status().message()));
      return kExitUsage;
    }
    baseline = *std::move(parsed);
  }
  // What each child needs of this command line.
  std::vector<std::string> child_args;
  if (args.lint) child_args.push_back("--lint");
  for (const auto& [symbol, value] : dims) {
    child_args.push_back("--dim");
    child_args.push_back(absl::StrCat(symbol, "=", value));
  }
  auto pass_limit = [&](const char* flag, const std::optional<int64_t>& v) {
    if (!v.has_value()) return;
    child_args.push_back(flag);
    child_args.push_back(absl::StrCat(*v));
  };
  pass_limit("--max-file-bytes", args.max_file_bytes);
  pass_limit("--max-nodes", args.max_nodes);
  pass_limit("--max-tensor-elements", args.max_tensor_elements);
  pass_limit("--max-nesting", args.max_nesting);
  pass_limit("--max-function-inlines", args.max_function_inlines);
  const std::vector<std::string> models = tools::FindModels(args.positionals);
  if (models.empty()) {
    PrintError("check: no *.onnx or *.onnxtxt model found in the given folders");
    return kExitBadModel;
  }
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) {
    PrintError("check: cannot find this program's own path (/proc/self/exe)");
    return kExitBadModel;
  }
  self[n] = '\0';
  absl::StatusOr<std::vector<passes::CheckSetEntry>> entries =
      tools::CheckModels(self, models, child_args, static_cast<int>(jobs));
  if (!entries.ok()) {
    PrintError(absl::StrCat("check: ", entries.status().message()));
    return kExitBadModel;
  }
  std::vector<passes::Finding> findings = passes::CollectFindings(*entries);
  if (baseline.has_value()) passes::ApplyBaseline(*baseline, &findings);
  const bool text_to_stderr = stdout_users > 0;
  std::string text =
      passes::FormatCheckSetText(*entries, findings, args.strict, baseline.has_value());
  if (args.quiet) {
    // --quiet: the summary line only, as for one model (the set's is the last line).
    const size_t start = text.rfind('\n', text.size() >= 2 ? text.size() - 2 : 0);
    if (start != std::string::npos) text.erase(0, start + 1);
  }
  PrintOut(text, text_to_stderr);
  // The three reports are staged, then committed together: all of them or none.
  const absl::StatusOr<proto::InputFiles> inputs = proto::InputFiles{};
  SideOutput json, junit, sarif;
  if ((args.json.has_value() &&
       !json.Stage(*args.json, passes::FormatCheckSetJson(*entries, findings, args.strict),
                   inputs)) ||
      (args.junit.has_value() &&
       !junit.Stage(*args.junit, passes::FormatJUnit(*entries, findings, args.strict), inputs)) ||
      (args.sarif.has_value() &&
       !sarif.Stage(*args.sarif, passes::FormatSarif(*entries, findings, BCAST_VERSION), inputs))) {
    return kExitCannotWrite;
  }
  if (!json.Commit() || !junit.Commit() || !sarif.Commit()) return kExitCannotWrite;
  return passes::SetExitCode(*entries, findings, args.strict);
}

int RunCheckSet(const Command& cmd, const Args& args);

int RunCheck(const Command& cmd, const Args& args) {
  if (args.positionals.empty()) return Usage(cmd, "expects a MODEL (or several, or a folder)");
  bool set = args.positionals.size() > 1 || args.junit.has_value() || args.sarif.has_value() ||
             args.baseline.has_value();
  std::error_code ec;
  set = set ||
        (args.positionals[0] != kStdio && std::filesystem::is_directory(args.positionals[0], ec));
  if (set) return RunCheckSet(cmd, args);
  if (args.jobs.has_value()) return Usage(cmd, "--jobs is for several models or a folder");
  if (args.annotate != args.output.has_value()) {
    return Usage(cmd, "--annotate and -o OUT go together");
  }
  if (args.output.has_value() && args.json.has_value() && SamePath(*args.output, *args.json)) {
    return Usage(cmd, "-o OUT and --json FILE name the same file");
  }
  if (args.quiet && args.verbose) {
    return Usage(cmd, "--quiet and --verbose exclude each other");
  }
  // stdout carries one thing: the annotated model or the JSON; the text report then goes to
  // stderr.
  const bool model_to_stdout = args.output == kStdio;
  if (model_to_stdout && args.json == kStdio) {
    return Usage(cmd, "-o - and --json - both want stdout");
  }
  // --dim values are parsed before loading (a malformed one is a usage error whatever the
  // model); the names are checked against the model's symbols once it is analyzed.
  std::map<std::string, int64_t> dims;
  if (absl::Status s = ParseDimSpecs(args.dims, &dims); !s.ok()) {
    return Usage(cmd, std::string(s.message()));
  }
  const std::unique_ptr<passes::ProgressSink> progress = MakeProgress(args);
  absl::StatusOr<proto::Model> model = Load(args.positionals[0], args, progress.get());
  if (!model.ok()) {
    PrintError(std::string(model.status().message()));
    return LoadExitCode(model.status());
  }
  const std::string path = model->path;  // "<stdin>" for '-'
  driver::CheckRequest request;
  request.analysis.lint = args.lint;
  request.dims = dims;
  request.progress = progress.get();
  proto::Model annotated;
  if (args.annotate) request.annotated = &annotated.proto;
  absl::StatusOr<driver::CheckOutcome> outcome = driver::Check(*model, request);
  if (!outcome.ok()) {
    PrintError(absl::StrCat(path, ": ", outcome.status().message()));
    return LoadExitCode(outcome.status());
  }
  if (!outcome->dims_status.ok()) return Usage(cmd, std::string(outcome->dims_status.message()));
  const passes::Analysis* analysis = &outcome->analysis;
  const passes::DimEvaluation* at_ptr = outcome->at ? &*outcome->at : nullptr;
  const std::optional<passes::DimEvaluation>& at = outcome->at;
  const std::string json_path = args.json.value_or("");
  const passes::CheckDetail detail = args.quiet     ? passes::CheckDetail::kSummary
                                     : args.verbose ? passes::CheckDetail::kAll
                                                    : passes::CheckDetail::kIssues;
  // With the JSON or the model on stdout, the text report goes to stderr: a pipe gets nothing
  // but the machine-readable stream.
  const bool lint = request.analysis.lint;
  PrintOut(passes::FormatCheckText(*analysis, path, lint, at_ptr, detail),
           /*to_stderr=*/json_path == kStdio || model_to_stdout);
  // The JSON is committed after the annotated model is saved: a failed save leaves neither.
  SideOutput json;
  if (args.json.has_value() &&
      !json.Stage(json_path, passes::FormatCheckJson(*analysis, path, lint, at_ptr),
                  proto::InputFilesOf(*model))) {
    return kExitCannotWrite;
  }
  if (at && at->first_failure >= 0) {
    const passes::NodeVerdict& v = analysis->nodes[at->first_failure];
    PrintError(
        absl::StrCat(path, ": ", passes::LocatedMessage(v, at->nodes[at->first_failure].message)));
  }
  if (args.annotate) {
    annotated.path = model->path;
    annotated.base_dir = model->base_dir;
    annotated.file_dev = model->file_dev;
    annotated.file_ino = model->file_ino;
    passes::ProgressStep save_step(model_to_stdout ? nullptr : progress.get(),
                                   absl::StrCat("saving ", *args.output));
    absl::Status s =
        model_to_stdout ? WriteModelToStdout(annotated) : proto::SaveModel(annotated, *args.output);
    save_step.End(s.ok() ? "" : "failed");
    if (!s.ok()) {
      PrintError(model_to_stdout ? absl::StrCat(path, ": -o -: ", s.message())
                                 : std::string(s.message()));
      return kExitCannotWrite;
    }
  }
  if (!json.Commit()) return kExitCannotWrite;
  if (analysis->HasError() || (at && at->Fails(*analysis))) return kExitFound;
  if (at) {
    // At bound dims a conditional node that holds there is fine.
    if (args.strict && (at->conditional > 0 || at->unknown > 0)) return kExitFound;
    return kExitOk;
  }
  if (args.strict && (analysis->CountVerdict(bcast::Verdict::kConditional) > 0 ||
                      analysis->CountVerdict(bcast::Verdict::kUnknown) > 0)) {
    return kExitFound;
  }
  return kExitOk;
}

int RunOpt(const Command& cmd, const Args& args) {
  if (args.list_passes) {
    PrintPassList();
    std::printf("\nTargets:\n");
    for (const passes::TargetProfile& t : passes::BuiltinTargets()) {
      std::printf("  %-32s %s\n", t.name.c_str(), absl::StrJoin(t.passes, ",").c_str());
    }
    return kExitOk;
  }
  if (args.positionals.size() != 1) return Usage(cmd, "expects exactly one MODEL");
  // Every combination is checked here, before the model is read: a mistake costs nothing.
  const std::string& model_path = args.positionals[0];
  const bool dry_run = args.dry_run;
  const bool in_place = args.in_place;
  std::string output = args.output.value_or("");
  if (in_place) {
    if (model_path == kStdio) return Usage(cmd, "--in-place needs a MODEL file, not stdin");
    if (dry_run) return Usage(cmd, "--in-place and --dry-run conflict (--dry-run writes nothing)");
    if (args.output.has_value() && output != model_path) {
      return Usage(cmd, "--in-place writes MODEL itself: drop -o OUT");
    }
    output = model_path;
  }
  if (output.empty() && !dry_run) return Usage(cmd, "needs -o OUT (or --in-place, or --dry-run)");
  if (!dry_run && args.report.has_value() && SamePath(output, *args.report)) {
    return Usage(cmd, "the model and --report FILE name the same file");
  }
  const bool model_to_stdout = !dry_run && output == kStdio;
  const bool report_to_stdout = args.report == kStdio;
  if (model_to_stdout && report_to_stdout) {
    return Usage(cmd, "-o - and --report - both want stdout");
  }
  if (model_to_stdout && args.external_data) {
    return Usage(cmd, "-o - writes one stream: --external-data needs an output file");
  }
  // With the model or the JSON on stdout, the text lines go to stderr.
  const bool text_to_stderr = model_to_stdout || report_to_stdout;
  driver::OptSettings settings;
  settings.verify_each = args.verify_each;
  // The rewrite list has three readers: the text lines (--dry-run, --debug), --report and
  // --verify's pass attribution. Without them it is only counted.
  settings.keep_rewrite_log = args.dry_run || args.debug || args.report.has_value() || args.verify;
  if (args.fold_limit.has_value()) {
    if (*args.fold_limit < 0) return Usage(cmd, "--fold-limit must not be negative");
    settings.fold_limit_bytes = *args.fold_limit;
    settings.constant_fold_limit_bytes = *args.fold_limit;
  }
  passes::PipelineRequest request;
  request.target = args.target;
  request.target_file = args.target_file;
  for (absl::string_view name :
       absl::StrSplit(args.passes.value_or(""), ',', absl::SkipWhitespace())) {
    request.passes.emplace_back(absl::StripAsciiWhitespace(name));
  }
  if (args.passes.has_value() && request.passes.empty()) {
    return Usage(cmd, "--passes needs at least one name ('none' for load and save only)");
  }
  absl::StatusOr<passes::ResolvedPipeline> resolved = passes::ResolvePipeline(request);
  if (!resolved.ok()) {
    // A bad profile file is the file's fault and names it; anything else is the command line's.
    if (!request.target_file.empty() &&
        absl::StartsWith(resolved.status().message(), request.target_file)) {
      PrintError(std::string(resolved.status().message()));
      return kExitUsage;
    }
    return Usage(cmd, std::string(resolved.status().message()));
  }
  driver::DimBindingRequest bind;
  if (absl::Status s = ParseDimSpecs(args.dims, &bind.dims); !s.ok()) {
    return Usage(cmd, std::string(s.message()));
  }
  if (absl::Status s = ParseInputShapeSpecs(args.input_shapes, &bind.input_shapes); !s.ok()) {
    return Usage(cmd, std::string(s.message()));
  }
  const bool has_target = resolved->profile.has_value();
  if (args.allow_partial && !has_target) {
    return Usage(cmd, "--allow-partial relaxes a target's promise: give a target");
  }
  const std::unique_ptr<passes::ProgressSink> progress = MakeProgress(args);
  settings.progress = progress.get();
  // The target's engine decides at exact shapes where this build has it (else the table).
  std::unique_ptr<driver::LiveProbe> live;
  if (has_target && !args.no_live_probe) {
    absl::StatusOr<std::unique_ptr<driver::LiveProbe>> made =
        driver::MakeLiveProbe(resolved->profile->name, args.probe_cache.value_or(""));
    if (made.ok()) live = *std::move(made);
  }
  settings.live = live.get();
  absl::StatusOr<proto::Model> model = Load(model_path, args, progress.get());
  if (!model.ok()) {
    PrintError(std::string(model.status().message()));
    return LoadExitCode(model.status());
  }
  const std::string label = model->path;  // "<stdin>" for '-'
  // The files the model reads as loaded: no output may replace one, whatever the passes do.
  const absl::StatusOr<proto::InputFiles> inputs = proto::InputFilesOf(*model);
  // -o naming MODEL (or its external data) would fail at the save (exit 4) after every pass
  // ran and printed a report that reads as success: refused now, with the save's own words.
  // --in-place is the way to replace MODEL (written safely, through a temporary).
  if (!in_place && !dry_run && !model_to_stdout && inputs.ok()) {
    struct stat st;
    if (::stat(output.c_str(), &st) == 0) {
      const proto::FileId id{st.st_dev, st.st_ino};
      if (const std::string* what = inputs->Find(id)) {
        PrintError(absl::StrCat(output, ": is ", *what, "; refusing to overwrite it",
                                inputs->IsModel(id) ? " (pass --in-place to allow)" : ""));
        return kExitCannotWrite;
      }
    }
  }
  passes::OptReport report;
  if (!bind.empty()) {
    absl::StatusOr<driver::DimBindingOutcome> bound =
        driver::BindDims(&*model, bind, progress.get());
    if (!bound.ok()) {
      PrintError(absl::StrCat(label, ": ", bound.status().message()));
      return LoadExitCode(bound.status());
    }
    if (!bound->usage.empty()) return Usage(cmd, absl::StrCat(label, ": ", bound->usage));
    if (!bound->failure.empty()) {
      // As check --dim: the first node that fails at these dims; nothing is written.
      PrintError(absl::StrCat(label, ": ", bound->failure));
      return kExitFound;
    }
    report.bindings = bound->bindings;
    report.dims_fixed = bound->dims_fixed;
  }
  // --verify compares against the model as loaded (with the dims bound: the same inputs feed
  // both).
  std::optional<proto::Model> original;
  if (args.verify) original = *model;
  // --verify-engine: the engine named like the target ("ncnn", or a profile file's
  // "ncnn-20260722"), found before any pass runs.
  std::optional<proto::Model> engine_original;
  std::optional<engines::EngineFactory> engine_factory;
  std::string engine_name;
  if (args.verify_engine) {
    if (!has_target) return Usage(cmd, "--verify-engine runs a target's engine: give a target");
    engine_name = std::string(
        absl::string_view(resolved->profile->name).substr(0, resolved->profile->name.find('-')));
    absl::StatusOr<engines::EngineFactory> factory = engines::FindEngine(engine_name);
    if (!factory.ok()) {
      return Usage(cmd, absl::StrCat("--verify-engine: target ", resolved->profile->name, ": ",
                                     factory.status().message()));
    }
    engine_factory = *std::move(factory);
    engine_original = *model;
  }
  report.output_path = dry_run ? "" : model_to_stdout ? "<stdout>" : output;
  // A node left outside the target's form fails opt below unless --allow-partial.
  const absl::Status status = driver::Optimize(&*model, *resolved, settings, &report);
  // The ops the target's engine has no layer for, as its profile measured them: named in the
  // report's last line, and each with its count in the warnings below (report.unsupported_ops).
  const std::vector<std::string> unsupported_ops = resolved->profile.has_value()
                                                       ? resolved->profile->unsupported_ops
                                                       : std::vector<std::string>{};
  // With --passes none, the report is the "dims bound" line when dims were bound.
  if (!resolved->passes.empty() || !report.bindings.empty()) {
    PrintOut(driver::FormatOptText(report, model->proto.graph(), unsupported_ops,
                                   dry_run || args.debug, args.debug,
                                   /*list_violations=*/false),
             text_to_stderr);
  }
  if (!status.ok()) {
    PrintError(absl::StrCat(label, ": ", status.message()));
    switch (status.code()) {
      case absl::StatusCode::kUnimplemented:
        return kExitUnsupported;
      case absl::StatusCode::kFailedPrecondition:
        return kExitUsage;
      default:
        return kExitBadModel;
    }
  }
  // Ops the engine has no layer for: warnings, before the verdict on the broadcasts (exit 0
  // when every broadcast is placed: they are not broadcast forms).
  for (const auto& [op, count] : report.unsupported_ops) {
    PrintError(absl::StrCat(label, ": warning: ", report.target, " has no layer for ", op, " (",
                            count,
                            " node(s)): the engine stops there; not a broadcast form, "
                            "so no rewrite of opt changes it"));
  }
  if (!report.violations.empty()) {
    // Said once, here (the report above gives only their count): one self-contained line per
    // node (model, target, what happened to OUT, the node), then each hint that several nodes
    // share, once with its count.
    const bool partial = args.allow_partial;
    const driver::FoldedViolations folded = driver::FoldViolationHints(report.violations);
    const std::string outcome = partial ? "written anyway: --allow-partial"
                                        : "nothing written, --allow-partial writes it anyway";
    const size_t total = folded.nodes.size();
    for (size_t k = 0; k < total; ++k) {
      PrintError(absl::StrCat(label, ": target ", report.target, " not met (node ", k + 1, " of ",
                              total, " not in its form; ", outcome, "): ", folded.nodes[k]));
    }
    for (const std::string& hint : folded.hints) {
      PrintError(absl::StrCat(label, ": target ", report.target, " not met (", total,
                              " nodes not in its form; ", outcome, "): ", hint));
    }
    if (!partial) return kExitUnsupported;
  }
  if (original.has_value()) {
    verify::VerifyOptions vopts;
    // The run's own report, in memory, names the pass behind a divergence.
    vopts.report = &report;
    vopts.progress = progress.get();
    absl::StatusOr<verify::VerifyResult> result = verify::Verify(*original, *model, vopts);
    if (!result.ok()) {
      PrintError(absl::StrCat(label, ": --verify: ", result.status().message()));
      return LoadExitCode(result.status());
    }
    PrintOut(verify::FormatVerifyText(*result, label, dry_run ? "(rewritten)" : report.output_path),
             text_to_stderr);
    if (!result->match) {
      PrintError(absl::StrCat(dry_run ? label : report.output_path,
                              ": the rewritten model differs from the original; not written"));
      return kExitFound;
    }
  }
  if (engine_original.has_value()) {
    absl::StatusOr<driver::EngineVerdict> verdict = driver::VerifyOnEngine(
        *engine_original, *model, *engine_factory, engine_name, report.bindings);
    if (!verdict.ok()) {
      PrintError(absl::StrCat(label, ": --verify-engine: ", verdict.status().message()));
      return LoadExitCode(verdict.status());
    }
    report.engine_line = verdict->line;
    report.engine_outcome = verdict->outcome;
    PrintOut(absl::StrCat(verdict->line, "\n"), text_to_stderr);
  }
  // The report is committed once the model is (with --dry-run it is the output): a command
  // that fails leaves none. Staged first, so a report that cannot be written stops opt before
  // the model is saved.
  SideOutput report_file;
  if (args.report.has_value() &&
      !report_file.Stage(*args.report, passes::FormatOptJson(report), inputs)) {
    return kExitCannotWrite;
  }
  if (dry_run) return report_file.Commit() ? kExitOk : kExitCannotWrite;
  if (model_to_stdout) {
    if (absl::Status s = WriteModelToStdout(*model); !s.ok()) {
      PrintError(absl::StrCat(label, ": -o -: ", s.message()));
      return kExitCannotWrite;
    }
    return report_file.Commit() ? kExitOk : kExitCannotWrite;
  }
  proto::SaveOptions save;
  save.in_place = in_place;
  save.external_data = args.external_data;
  if (inputs.ok()) save.inputs = &*inputs;
  passes::ProgressStep save_step(progress.get(), absl::StrCat("saving ", output));
  const absl::Status saved = proto::SaveModel(*model, output, save);
  save_step.End(saved.ok() ? "" : "failed");
  if (!saved.ok()) {
    PrintError(std::string(saved.message()));
    return kExitCannotWrite;
  }
  return report_file.Commit() ? kExitOk : kExitCannotWrite;
}

// Binds --dim SYMBOL=N and --input NAME=FILE.pb; usage errors name the argument.
absl::Status ParseRunBindings(const Args& args, std::map<std::string, int64_t>* dims,
                              std::vector<std::pair<std::string, std::string>>* inputs) {
  for (const std::string& list : args.dims) {
    // One binding or a comma list ("H=224,W=224"), as check and opt take them.
    for (absl::string_view spec : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
      std::pair<std::string, std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
      int64_t n = 0;
      if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &n) || n < 0) {
        return absl::InvalidArgumentError(absl::StrCat("--dim expects SYMBOL=N, got '", spec, "'"));
      }
      (*dims)[kv.first] = n;
    }
  }
  for (const std::string& spec : args.inputs) {
    std::pair<std::string, std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    if (kv.first.empty() || kv.second.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input expects NAME=FILE.pb, got '", spec, "'"));
    }
    inputs->push_back(std::move(kv));
  }
  return absl::OkStatus();
}

// Exit code of a failed run: unsupported -> 3, anything else (a bad model) -> 2. The message
// names the model first, as every other refusal does.
int RunFailure(const std::string& model_path, const absl::Status& status) {
  const absl::string_view message = status.message();
  PrintError(absl::StartsWith(message, absl::StrCat(model_path, ": "))
                 ? std::string(message)
                 : absl::StrCat(model_path, ": ", message));
  return status.code() == absl::StatusCode::kUnimplemented ? kExitUnsupported : kExitBadModel;
}

// Writes run's output files (atomically, as one set): never onto a link, a non-regular file,
// the model, its external data, an --input file or a file of a --test-data directory.
absl::Status WriteRunOutputs(const proto::Model& model, const Args& args,
                             const std::vector<std::string>& dirs,
                             const std::vector<proto::OutputFile>& files) {
  absl::StatusOr<proto::InputFiles> inputs = proto::InputFilesOf(model);
  if (!inputs.ok()) return inputs.status();
  for (const std::string& spec : args.inputs) {
    const size_t eq = spec.find('=');
    if (eq != std::string::npos) inputs->AddPath(spec.substr(eq + 1), "an --input file");
  }
  for (const std::string& dir : args.test_data) {
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(dir, ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      inputs->AddPath(it->path().string(), "a --test-data file");
    }
  }
  for (const std::string& dir : dirs) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return absl::PermissionDeniedError(absl::StrCat(dir, ": cannot create: ", ec.message()));
    }
  }
  return proto::WriteOutputFiles(files, *inputs);
}

// Refuses a given input that does not fit the model's declaration (exit 65): the message names
// the model, where the input came from (a test data directory), the input and what disagrees.
int BadInput(const std::string& model_path, const std::string& source, const absl::Status& s) {
  PrintError(absl::StrCat(model_path, ": ", source.empty() ? "" : absl::StrCat(source, ": "),
                          s.message()));
  return kExitBadInput;
}

// One stderr line naming the value each symbol of the random inputs takes (a model run with
// every symbol at 1 by default may compute on nothing: say so, and how to change it).
void PrintRandomBindings(const rt::Graph& graph, const std::set<std::string>& given,
                         const std::map<std::string, int64_t>& dim_options,
                         const std::map<std::string, int64_t>& bound) {
  std::map<std::string, std::string> shown;
  int64_t unnamed = 0;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    if (given.count(graph.inputs[i]) > 0 || !graph.input_shape_known[i]) continue;
    for (size_t k = 0; k < graph.input_shapes[i].size(); ++k) {
      if (graph.input_shapes[i][k] >= 0) continue;
      const std::string& symbol = graph.input_symbols[i][k];
      if (symbol.empty()) {
        ++unnamed;
        continue;
      }
      auto it = bound.find(symbol);
      shown[symbol] = it == bound.end()               ? "1 (default)"
                      : dim_options.count(symbol) > 0 ? absl::StrCat(it->second)
                                                      : absl::StrCat(it->second, " (as given)");
    }
  }
  if (shown.empty() && unnamed == 0) return;
  std::vector<std::string> parts;
  for (const auto& [symbol, value] : shown) parts.push_back(absl::StrCat(symbol, "=", value));
  if (unnamed > 0) parts.push_back(absl::StrCat(unnamed, " unnamed dim(s)=1 (default)"));
  PrintError(absl::StrCat("run: random inputs with ", absl::StrJoin(parts, ", "),
                          " (set with --dim NAME=VALUE)"));
}

// run --profile: the op types by total time, then the slowest nodes (at most 25).
std::string FormatProfileText(const rt::RunProfile& p) {
  const double runs = static_cast<double>(std::max<int64_t>(p.runs(), 1));
  const double total_ms = p.total_seconds() * 1000 / runs;
  auto share = [&](double seconds) {
    return p.total_seconds() > 0 ? 100 * seconds / p.total_seconds() : 0.0;
  };
  std::string out = absl::StrFormat(
      "profile: %.3f ms per run over %lld run(s), main-graph nodes (control flow includes its "
      "bodies)\n%-24s %6s %12s %7s\n",
      total_ms, static_cast<long long>(p.runs()), "op", "nodes", "ms/run", "share");
  for (const rt::RunProfile::OpTime& o : p.Ops()) {
    absl::StrAppendFormat(&out, "%-24s %6lld %12.3f %6.1f%%\n", o.op,
                          static_cast<long long>(o.nodes), o.seconds * 1000 / runs,
                          share(o.seconds));
  }
  const std::vector<rt::RunProfile::NodeTime> nodes = p.Nodes();
  // Plan-time cost (prepared state: weights packed, primitives built), apart from run time.
  absl::StrAppendFormat(&out, "plan time: %.3f ms once (not in ms/run), %.1f KiB prepared\n",
                        p.prepare_seconds() * 1000, p.prepared_bytes() / 1024.0);
  absl::StrAppendFormat(&out, "slowest nodes:\n%13s %7s  %-18s %-18s %10s %-11s %s\n", "ms/run",
                        "share", "op", "output", "plan ms", "path", "node");
  for (size_t i = 0; i < nodes.size() && i < 25; ++i) {
    const rt::RunProfile::NodeTime& t = nodes[i];
    absl::StrAppendFormat(&out, "%10.3f ms %6.1f%%  %-18s %-18s %10.3f %-11s %s\n",
                          t.seconds * 1000 / runs, share(t.seconds), t.op, t.output_shape,
                          t.prepare_seconds * 1000, t.prepared.empty() ? "-" : t.prepared, t.node);
  }
  return out;
}

// run --profile-json: the same figures as data (docs/report-schema.md).
passes::Json ProfileJson(const rt::RunProfile& p) {
  const double runs = static_cast<double>(std::max<int64_t>(p.runs(), 1));
  passes::Json doc;
  doc["schema_version"] = passes::kReportSchemaVersion;
  doc["kind"] = "profile";
  doc["runs"] = p.runs();
  doc["ms_per_run"] = passes::JsonNumber(p.total_seconds() * 1000 / runs);
  auto share = [&](double seconds) {
    return passes::JsonNumber(p.total_seconds() > 0 ? seconds / p.total_seconds() : 0.0);
  };
  passes::Json ops = passes::Json::array();
  for (const rt::RunProfile::OpTime& o : p.Ops()) {
    ops.push_back(passes::Json{{"op", o.op},
                               {"nodes", o.nodes},
                               {"ms_per_run", passes::JsonNumber(o.seconds * 1000 / runs)},
                               {"share", share(o.seconds)}});
  }
  doc["ops"] = std::move(ops);
  passes::Json nodes = passes::Json::array();
  for (const rt::RunProfile::NodeTime& t : p.Nodes()) {
    nodes.push_back(passes::Json{{"node", t.node},
                                 {"op", t.op},
                                 {"output_shape", t.output_shape},
                                 {"ms_per_run", passes::JsonNumber(t.seconds * 1000 / runs)},
                                 {"share", share(t.seconds)},
                                 {"plan_ms", passes::JsonNumber(t.prepare_seconds * 1000)},
                                 {"prepared_bytes", t.prepared_bytes},
                                 {"path", t.prepared}});
  }
  doc["nodes"] = std::move(nodes);
  return doc;
}

int RunRun(const Command& cmd, const Args& args) {
  if (args.positionals.size() != 1) return Usage(cmd, "expects exactly one MODEL");
  rt::Tolerance tolerance;
  tolerance.rtol = args.rtol.value_or(tolerance.rtol);
  tolerance.atol = args.atol.value_or(tolerance.atol);
  const int64_t threads = args.threads;
  const int64_t bench = args.bench;
  if (threads < 1 || threads > kMaxThreads || bench < 0) {
    return Usage(
        cmd, absl::StrCat("--threads must be between 1 and ", kMaxThreads, " and --bench >= 0"));
  }
  const absl::StatusOr<double> timeout = TimeoutFrom(args);
  if (!timeout.ok()) return Usage(cmd, std::string(timeout.status().message()));
  const absl::StatusOr<int64_t> max_memory = MaxMemoryFrom(args);
  if (!max_memory.ok()) return Usage(cmd, std::string(max_memory.status().message()));
  rt::RandomInputOptions random;
  random.seed = static_cast<uint64_t>(args.seed);
  std::vector<std::pair<std::string, std::string>> input_files;
  if (absl::Status s = ParseRunBindings(args, &random.dims, &input_files); !s.ok()) {
    return Usage(cmd, std::string(s.message()));
  }

  if (args.output_dir == kStdio) {
    return Usage(cmd, "--output-dir takes a directory (one file per output); '-' is not one");
  }
  const std::unique_ptr<passes::ProgressSink> progress = MakeProgress(args);
  absl::StatusOr<proto::Model> model = Load(args.positionals[0], args, progress.get());
  if (!model.ok()) {
    PrintError(std::string(model.status().message()));
    return LoadExitCode(model.status());
  }
  rt::LoadOptions load;
  load.max_function_inlines = LimitsFrom(args)->max_function_inlines;
  passes::ProgressStep prepare_step(progress.get(), "preparing the executor");
  absl::StatusOr<std::shared_ptr<const rt::Model>> loaded = rt::LoadRuntimeModel(*model, load);
  if (!loaded.ok()) {
    prepare_step.End("failed");
    PrintError(absl::StrCat(model->path, ": ", loaded.status().message()));
    return LoadExitCode(loaded.status());
  }
  rt::RunOptions options;
  options.threads = static_cast<int>(threads);
  options.max_memory_bytes = *max_memory;
  if (args.max_tensor_elements.has_value()) {
    options.max_tensor_elements = *args.max_tensor_elements;
  }
  rt::RunProfile profile;
  const bool profiling = args.profile || args.profile_json.has_value();
  if (profiling) {
    options.node_done = [&profile](const rt::Node& node, const std::vector<rt::Value>& outputs,
                                   double seconds) { profile.Record(node, outputs, seconds); };
    options.node_prepared = [&profile](const rt::Node& node, double seconds, int64_t bytes,
                                       const std::string& label) {
      profile.RecordPrepare(node, seconds, bytes, label);
    };
  }
  absl::StatusOr<std::unique_ptr<rt::Executor>> exec = rt::Executor::Create(*loaded, options);
  prepare_step.End(exec.ok() ? "" : "failed");
  if (!exec.ok()) {
    PrintError(absl::StrCat(model->path, ": ", exec.status().message()));
    return LoadExitCode(exec.status());
  }
  (*exec)->set_timeout(*timeout);  // covers every run below, --bench included
  const rt::Graph& graph = (*exec)->graph();
  // A misspelt --dim would otherwise leave its symbol at the default: a usage error, as in
  // check, opt and verify (one rule for every subcommand).
  const std::set<std::string> symbols = verify::InputSymbols(graph);
  for (const auto& [symbol, value] : random.dims) {
    if (symbols.count(symbol) > 0) continue;
    return Usage(cmd, absl::StrCat(model->path, ": --dim ", symbol, "=", value,
                                   ": the model's inputs have no symbol '", symbol, "' (they have ",
                                   symbols.empty() ? "none" : absl::StrJoin(symbols, ", "), ")"));
  }
  const std::map<std::string, int64_t> dim_options = random.dims;

  // --input files, typed by the model's declaration of the input.
  rt::Feeds given;
  for (const auto& [name, path] : input_files) {
    const onnx::TypeProto* type = nullptr;
    for (const onnx::ValueInfoProto& v : model->proto.graph().input()) {
      if (v.name() == name) type = &v.type();
    }
    if (type == nullptr) return Usage(cmd, absl::StrCat("the model has no input '", name, "'"));
    absl::StatusOr<rt::Value> value = rt::LoadValue(path, type);
    if (!value.ok()) {
      PrintError(std::string(value.status().message()));
      return kExitBadModel;
    }
    given.emplace_back(name, std::move(*value));
  }
  auto with_given = [&](rt::Feeds feeds) {
    for (const auto& [name, value] : given) {
      // A structured binding cannot be captured by clang 14: capture a plain reference.
      const std::string& wanted = name;
      auto it = std::find_if(feeds.begin(), feeds.end(),
                             [&wanted](const auto& f) { return f.first == wanted; });
      if (it != feeds.end()) {
        it->second = value;
      } else {
        feeds.emplace_back(name, value);
      }
    }
    return feeds;
  };

  // One run per test data set, or one on random inputs.
  struct Job {
    std::string label;
    rt::Feeds feeds;
    std::vector<rt::Value> expected;
    std::vector<std::string> expected_names;
  };
  std::vector<Job> jobs;
  for (const std::string& dir : args.test_data) {
    absl::StatusOr<rt::TestDataSet> set = rt::LoadTestDataSet(*model, dir);
    if (!set.ok()) {
      PrintError(std::string(set.status().message()));
      return set.status().code() == absl::StatusCode::kUnimplemented ? kExitUnsupported
                                                                     : kExitBadModel;
    }
    jobs.push_back({dir, with_given(std::move(set->feeds)), std::move(set->expected),
                    std::move(set->output_names)});
  }
  // Given inputs (files and test data) are checked against the declaration before running.
  for (const Job& job : jobs) {
    absl::StatusOr<rt::SymbolValues> bound =
        rt::CheckInputs(graph, job.feeds, dim_options, "--dim");
    if (!bound.ok()) return BadInput(model->path, job.label, bound.status());
  }
  std::optional<std::set<std::string>> random_skip;  // set when the inputs are random
  if (jobs.empty()) {
    std::set<std::string> skip;
    for (const auto& [name, value] : given) skip.insert(name);
    // Symbols the given inputs bind size the random ones alike.
    absl::StatusOr<rt::SymbolValues> bound = rt::CheckInputs(graph, given, dim_options, "--dim");
    if (!bound.ok()) return BadInput(model->path, "", bound.status());
    random.dims = *bound;
    random.max_elements = options.max_tensor_elements;
    absl::StatusOr<rt::Feeds> feeds = rt::RandomInputs(graph, random, skip);
    if (!feeds.ok()) return RunFailure(model->path, feeds.status());
    random_skip = std::move(skip);
    jobs.push_back({"random inputs", with_given(std::move(*feeds)), {}, {}});
  }

  const bool quiet = bench > 0;
  // With the profile's JSON on stdout, the text lines go to stderr.
  const bool text_to_stderr = args.profile_json == kStdio;
  bool mismatch = false;
  std::vector<proto::OutputFile> output_files;
  std::vector<std::string> output_dirs;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const Job& job = jobs[j];
    passes::ProgressStep run_step(progress.get(), absl::StrCat("run ", job.label));
    absl::StatusOr<std::vector<rt::Value>> outputs = (*exec)->Run(job.feeds);
    run_step.End(outputs.ok() ? "" : "failed");
    if (!outputs.ok()) return RunFailure(model->path, outputs.status());
    // Said once the run succeeded, so that a refusal stays one line.
    if (random_skip.has_value()) PrintRandomBindings(graph, *random_skip, dim_options, random.dims);
    for (size_t k = 0; k < job.expected.size() && k < outputs->size(); ++k) {
      rt::Comparison c =
          rt::CompareValues((*outputs)[k], job.expected[k], job.expected_names[k], tolerance);
      if (!c.match) {
        PrintError(absl::StrCat(job.label, ": ", c.message));
        PrintError(absl::StrCat(job.label, ": ", c.Statistics(job.expected_names[k], tolerance)));
        mismatch = true;
      }
    }
    for (size_t k = 0; k < outputs->size() && k < graph.outputs.size(); ++k) {
      const rt::Value& v = (*outputs)[k];
      if (v.is_tensor() && v.tensor != nullptr && v.tensor->num_elements() == 0) {
        PrintError(absl::StrCat(job.label, ": warning: output '", graph.outputs[k],
                                "' is empty (shape ", rt::ShapeToString(v.tensor->shape()), ")"));
      }
    }
    if (!quiet) {
      for (size_t k = 0; k < outputs->size(); ++k) {
        const rt::Value& v = (*outputs)[k];
        std::string what = v.is_tensor()     ? v.tensor->DebugString()
                           : v.is_sequence() ? absl::StrCat("sequence of ", v.sequence.size())
                                             : std::string("empty optional");
        PrintOut(absl::StrCat(job.label, ": output '", graph.outputs[k], "' ", what, "\n"),
                 text_to_stderr);
      }
      if (!job.expected.empty() && !mismatch) {
        PrintOut(absl::StrFormat("%s: %zu output(s) match (rtol %g, atol %g)\n", job.label,
                                 job.expected.size(), tolerance.rtol, tolerance.atol),
                 text_to_stderr);
      }
    }
    if (args.output_dir.has_value()) {
      std::string dir = *args.output_dir;
      if (jobs.size() > 1) {
        const size_t slash = job.label.find_last_of('/');
        dir = absl::StrCat(dir, "/",
                           slash == std::string::npos ? job.label : job.label.substr(slash + 1));
      }
      for (size_t k = 0; k < outputs->size(); ++k) {
        // The declared type decides the file's message (an optional's value stays wrapped).
        const onnx::TypeProto* type = static_cast<int>(k) < model->proto.graph().output_size()
                                          ? &model->proto.graph().output(k).type()
                                          : nullptr;
        absl::StatusOr<proto::RawValue> raw =
            rt::RawFromValue((*outputs)[k], k < graph.outputs.size() ? graph.outputs[k] : "", type);
        absl::StatusOr<std::string> bytes =
            raw.ok() ? proto::SerializeValueFile(*raw) : raw.status();
        if (!bytes.ok()) return RunFailure(model->path, bytes.status());
        output_files.push_back({absl::StrCat(dir, "/output_", k, ".pb"), *std::move(bytes)});
      }
      output_dirs.push_back(dir);
    }
  }
  if (profiling) {
    // The runs above count unless --bench times its own (the first run includes planning).
    if (bench > 0) {
      profile.ResetRuns();  // plan-time records stay
    } else {
      for (size_t j = 0; j < jobs.size(); ++j) profile.EndRun();
    }
  }
  if (bench > 0) {
    // The runs above were the warm-up; buffers are reused from here on.
    std::vector<double> ms;
    passes::ProgressStep bench_step(progress.get(), absl::StrCat("bench ", bench, " runs"));
    for (int64_t i = 0; i < bench; ++i) {
      bench_step.Update(i, bench);
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<std::vector<rt::Value>> outputs = (*exec)->Run(jobs[0].feeds);
      const auto end = std::chrono::steady_clock::now();
      if (!outputs.ok()) {
        bench_step.End("failed");
        return RunFailure(model->path, outputs.status());
      }
      ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
      profile.EndRun();
    }
    std::sort(ms.begin(), ms.end());
    const double median =
        ms.size() % 2 == 1 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
    if (bench_step.active()) bench_step.End(absl::StrFormat("median %.3g ms", median));
    PrintOut(absl::StrFormat("bench: runs=%lld median_ms=%.4f min_ms=%.4f\n",
                             static_cast<long long>(bench), median, ms.front()),
             text_to_stderr);
  }
  // Every output file is written only once all runs (--bench's included) succeeded, all of
  // them or none.
  if (!output_files.empty()) {
    if (absl::Status s = WriteRunOutputs(*model, args, output_dirs, output_files); !s.ok()) {
      PrintError(std::string(s.message()));
      return kExitCannotWrite;
    }
  }
  // The profile, a side output, after the outputs.
  if (profiling) {
    if (args.profile) PrintOut(FormatProfileText(profile), text_to_stderr);
    if (args.profile_json.has_value()) {
      const absl::StatusOr<proto::InputFiles> inputs = proto::InputFilesOf(*model);
      if (!SideOutput().Write(*args.profile_json, ProfileJson(profile).dump(1) + "\n", inputs)) {
        return kExitCannotWrite;
      }
    }
  }
  return mismatch ? kExitFound : kExitOk;
}

int RunVerify(const Command& cmd, const Args& args) {
  if (args.positionals.size() != 2) return Usage(cmd, "expects ORIGINAL and REWRITTEN");
  verify::VerifyOptions options;
  options.test_data = args.test_data;
  options.edge_cases = args.edge_cases;
  options.local = args.local;
  options.report_path = args.report.value_or("");
  // Bounded: every sample is held at once, and a value past INT_MAX must not wrap.
  if (args.samples < 1 || args.samples > kMaxSamples || args.threads < 1 ||
      args.threads > kMaxThreads) {
    return Usage(cmd, absl::StrCat("--samples must be between 1 and ", kMaxSamples,
                                   ", --threads between 1 and ", kMaxThreads));
  }
  const absl::StatusOr<double> timeout = TimeoutFrom(args);
  if (!timeout.ok()) return Usage(cmd, std::string(timeout.status().message()));
  const absl::StatusOr<int64_t> max_memory = MaxMemoryFrom(args);
  if (!max_memory.ok()) return Usage(cmd, std::string(max_memory.status().message()));
  options.max_memory_bytes = *max_memory;
  options.seed = static_cast<uint64_t>(args.seed);
  options.samples = static_cast<int>(args.samples);
  options.threads = static_cast<int>(args.threads);
  if (args.rtol.has_value() || args.atol.has_value()) {
    options.tolerance =
        rt::Tolerance{args.rtol.value_or(1e-3), args.atol.value_or(1e-7), /*exact=*/false};
  }
  if (args.positionals[0] == kStdio && args.positionals[1] == kStdio) {
    return Usage(cmd, "only one model can come from stdin ('-')");
  }
  if (absl::Status s = ParseDimSpecs(args.dims, &options.dims); !s.ok()) {
    return Usage(cmd, std::string(s.message()));
  }
  const std::unique_ptr<passes::ProgressSink> progress = MakeProgress(args);
  options.progress = progress.get();
  std::vector<proto::Model> models;
  for (const std::string& path : args.positionals) {
    absl::StatusOr<proto::Model> model = Load(path, args, progress.get());
    if (!model.ok()) {
      PrintError(std::string(model.status().message()));
      return LoadExitCode(model.status());
    }
    models.push_back(*std::move(model));
  }
  const rt::RunBudget budget(*timeout);  // starts after loading, like run's
  options.budget = &budget;
  absl::StatusOr<verify::VerifyResult> result = verify::Verify(models[0], models[1], options);
  if (!result.ok()) {
    // No input both models accept, a --dim that fits neither: the command line's mistake.
    if (verify::IsUsageError(result.status())) {
      return Usage(cmd, absl::StrCat(models[0].path, " vs ", models[1].path, ": ",
                                     result.status().message()));
    }
    PrintError(absl::StrCat(models[0].path, ": ", result.status().message()));
    if (verify::IsBadInputError(result.status())) return kExitBadInput;
    return LoadExitCode(result.status());
  }
  const std::string json_path = args.json.value_or("");
  PrintOut(verify::FormatVerifyText(*result, models[0].path, models[1].path),
           /*to_stderr=*/json_path == kStdio);
  if (args.json.has_value()) {
    // Neither model (nor their external data, nor the report) may be replaced by the JSON.
    absl::StatusOr<proto::InputFiles> inputs = proto::InputFilesOf(models[0]);
    if (inputs.ok()) {
      absl::StatusOr<proto::InputFiles> second = proto::InputFilesOf(models[1]);
      if (second.ok()) {
        inputs->AddAll(*second);
        if (args.report.has_value()) inputs->AddPath(*args.report, "the report");
      } else {
        inputs = second.status();
      }
    }
    // verify's only output: written (and committed) after every run has finished.
    SideOutput json;
    if (!json.Write(json_path, verify::FormatVerifyJson(*result, models[0].path, models[1].path),
                    inputs)) {
      return kExitCannotWrite;
    }
  }
  return result->match ? kExitOk : kExitFound;
}

const Command* FindCommand(const std::string& name) {
  for (const Command& cmd : Commands()) {
    if (name == cmd.name) return &cmd;
  }
  return nullptr;
}

// The first word picks the command, and that command's CommandLine parses the rest. Not CLI11
// subcommands: they read a later argument naming another command (a model file called "run")
// as that command, and hand what follows "--" back to the top level once a positional is set.
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
    Args ignored;  // only the declarations are needed
    CommandLine command_line(cmd->usage, cmd->summary);
    DeclareAll(*cmd, &command_line, &ignored);
    PrintCommandHelp(command_line);
    return kExitOk;
  }
  const Command* cmd = FindCommand(first);
  if (cmd == nullptr) {
    PrintError(absl::StrCat("onnx-bcast: unknown command '", first, "' (see 'onnx-bcast --help')"));
    return kExitUsage;
  }
  Args parsed;
  CommandLine command_line(cmd->usage, cmd->summary);
  DeclareAll(*cmd, &command_line, &parsed);
  if (absl::Status s = command_line.Parse({args.begin() + 1, args.end()}, &parsed.positionals);
      !s.ok()) {
    return Usage(*cmd, std::string(s.message()));
  }
  if (absl::StatusOr<proto::Limits> limits = LimitsFrom(parsed); !limits.ok()) {
    return Usage(*cmd, std::string(limits.status().message()));
  }
  if (parsed.help) {
    PrintCommandHelp(command_line);
    return kExitOk;
  }
  if (parsed.quiet && parsed.progress) {
    return Usage(*cmd, "--quiet and --progress exclude each other");
  }
  // The command boundary: an allocation that fails (the allocator throws instead of aborting,
  // see main) or a thread that cannot start ends the command with exit 2 and one line naming
  // the model, never a signal.
  const std::string subject =
      parsed.positionals.empty() ? absl::StrCat("onnx-bcast ", cmd->name) : parsed.positionals[0];
  try {
    const int code = cmd->run(*cmd, parsed);
    // A report that did not reach stdout (a full disk, a closed pipe) is not a success.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      PrintError(absl::StrCat(subject, ": cannot write to stdout: ", std::strerror(errno)));
      return code == kExitOk || code == kExitFound ? kExitCannotWrite : code;
    }
    return code;
  } catch (const std::bad_alloc&) {
    PrintError(absl::StrCat(subject,
                            ": out of memory (the model needs more memory than the "
                            "process may use; see --max-tensor-elements)"));
  } catch (const std::system_error& e) {
    PrintError(absl::StrCat(subject, ": out of resources: ", e.what()));
  } catch (const std::exception& e) {
    PrintError(absl::StrCat(subject, ": internal error: ", e.what()));
  }
  return kExitBadModel;
}

}  // namespace
}  // namespace onnx_bcast::cli

int main(int argc, char** argv) {
#ifdef BCAST_WITH_MIMALLOC
  // A failed `new` throws std::bad_alloc (tools/allocator.cc replaces mimalloc's aborting
  // operator new), caught at the command boundary in Main.
  // Allocation failures are reported by us, in one line; mimalloc prints nothing.
  mi_option_disable(mi_option_show_errors);
  mi_option_disable(mi_option_verbose);
  // 2 MiB pages (transparent huge pages when none are reserved) for the allocator's segments:
  // large graphs otherwise spend much of their time in first-touch page faults.
  mi_option_enable(mi_option_large_os_pages);
#endif
  return onnx_bcast::cli::Main(argc, argv);
}
