// conformance: runs every case of the ONNX backend test data (node, pytorch-converted,
// pytorch-operator, simple) on the executor, one forked child per case (crashes and time-outs
// stay contained), and prints per-folder counts; --check guards a list of cases that must pass.
// --fold runs fold-constants over each model first (twice: the second run must change nothing),
// so the folded models are checked against the same expected outputs; --folded-check holds the
// list of cases it must change, exactly (a fold that silently stopped folding would otherwise
// pass every case).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "passes/fold_constants.h"
#include "proto/model_io.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/constant_eval.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/test_data.h"

namespace onnx_bcast::conformance {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFolders[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

enum class Outcome { kPass, kFail, kUnsupported };

struct Result {
  std::string id;  ///< "node/test_add"
  std::string folder;
  Outcome outcome = Outcome::kFail;
  std::string reason;
  /// With --fold: fold-constants changed the model (then its outputs are those checked).
  bool folded = false;
};

struct Options {
  std::string data = "/usr/share/libonnx-testdata/data";
  std::string filter;
  std::string check;
  std::string update;
  bool list = false;
  int jobs = 1;
  int time_limit_s = 20;
  bool no_fork = false;
  bool fold = false;
  /// With --fold: the cases fold-constants must change, one per line (held by name, so that
  /// a fold that silently stops folding fails even while every case still passes).
  std::string folded_check;
  std::string folded_update;
};

Outcome FromStatus(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnimplemented ? Outcome::kUnsupported : Outcome::kFail;
}

// Loads, runs every test_data_set and compares; the reason names what went wrong first.
Result RunCase(const std::string& case_dir, const Options& options) {
  Result r;
  absl::StatusOr<proto::Model> model = proto::LoadModel(case_dir + "/model.onnx");
  if (!model.ok()) {
    r.outcome = FromStatus(model.status());
    r.reason = absl::StrCat("load: ", model.status().message());
    return r;
  }
  if (options.fold) {
    const passes::ConstantEvaluator evaluator = [](const proto::Model& fragment) {
      return runtime::EvaluateConstantModel(fragment);
    };
    passes::PassOptions po;
    po.evaluator = &evaluator;
    const std::unique_ptr<passes::Pass> fold = passes::CreateFoldConstantsPass();
    passes::PassStats stats;
    const proto::Model original = *model;
    if (absl::Status s = fold->Run(&*model, po, &stats); !s.ok()) {
      r.outcome = Outcome::kFail;
      r.reason = absl::StrCat("fold-constants: ", s.message());
      return r;
    }
    const proto::Model once = *model;
    r.folded = !proto::ModelsEqual(original.proto, once.proto);
    passes::PassStats again;
    std::string diff;
    if (absl::Status s = fold->Run(&*model, po, &again);
        !s.ok() || !proto::ModelsEqual(once.proto, model->proto, &diff)) {
      r.outcome = Outcome::kFail;
      r.reason = absl::StrCat("fold-constants is not idempotent: ", s.message(), diff);
      return r;
    }
  }
  absl::StatusOr<std::shared_ptr<const runtime::Model>> loaded = runtime::LoadRuntimeModel(*model);
  if (!loaded.ok()) {
    r.outcome = FromStatus(loaded.status());
    r.reason = absl::StrCat("load: ", loaded.status().message());
    return r;
  }
  absl::StatusOr<std::unique_ptr<runtime::Executor>> exec = runtime::Executor::Create(*loaded);
  if (!exec.ok()) {
    r.outcome = FromStatus(exec.status());
    r.reason = std::string(exec.status().message());
    return r;
  }
  (*exec)->set_deadline(absl::Now() + absl::Seconds(options.time_limit_s));
  const std::vector<std::string> sets = runtime::TestDataSetDirs(case_dir);
  if (sets.empty()) {
    r.reason = "no test_data_set_*";
    return r;
  }
  for (const std::string& dir : sets) {
    const std::string set_name = fs::path(dir).filename().string();
    absl::StatusOr<runtime::TestDataSet> set = runtime::LoadTestDataSet(*model, dir);
    if (!set.ok()) {
      r.outcome = FromStatus(set.status());
      r.reason = absl::StrCat(set_name, ": ", set.status().message());
      return r;
    }
    absl::StatusOr<std::vector<runtime::Value>> outputs = (*exec)->Run(set->feeds);
    if (!outputs.ok()) {
      r.outcome = FromStatus(outputs.status());
      r.reason = absl::StrCat(set_name, ": ", outputs.status().message());
      return r;
    }
    for (size_t k = 0; k < set->expected.size(); ++k) {
      runtime::Comparison c = runtime::CompareValues((*outputs)[k], set->expected[k], set->output_names[k]);
      if (!c.match) {
        r.outcome = Outcome::kFail;
        r.reason = absl::StrCat(set_name, ": ", c.message);
        return r;
      }
    }
  }
  r.outcome = Outcome::kPass;
  return r;
}

// One line "<outcome digit><folded digit> <reason>" written by a child to its pipe.
std::string Encode(const Result& r) {
  std::string reason = r.reason.substr(0, 2000);
  std::replace(reason.begin(), reason.end(), '\n', ' ');
  return absl::StrCat(static_cast<int>(r.outcome), r.folded ? 1 : 0, " ", reason);
}

struct Child {
  pid_t pid;
  int fd;
  Result result;
  std::string out;
};

void Drain(Child& c) {
  char buf[4096];
  for (;;) {
    const ssize_t n = read(c.fd, buf, sizeof(buf));
    if (n <= 0) break;
    c.out.append(buf, static_cast<size_t>(n));
  }
}

void Finish(Child& c, int status, const Options& options) {
  Drain(c);
  close(c.fd);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && c.out.size() >= 3) {
    c.result.outcome = static_cast<Outcome>(c.out[0] - '0');
    c.result.folded = c.out[1] == '1';
    c.result.reason = c.out.substr(3);
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    c.result.outcome = Outcome::kFail;
    c.result.reason = absl::StrCat("timed out after ", options.time_limit_s, " s");
  } else if (WIFSIGNALED(status)) {
    c.result.outcome = Outcome::kFail;
    c.result.reason = absl::StrCat("crashed (", strsignal(WTERMSIG(status)), ")");
  } else {
    c.result.outcome = Outcome::kFail;
    c.result.reason = "exited abnormally";
  }
}

std::vector<Result> RunAll(const std::vector<Result>& cases, const Options& options) {
  std::vector<Result> results;
  if (options.no_fork) {
    for (const Result& c : cases) {
      Result r = RunCase(options.data + "/" + c.id, options);
      r.id = c.id;
      r.folder = c.folder;
      results.push_back(std::move(r));
    }
    return results;
  }
  std::map<pid_t, Child> running;
  size_t next = 0;
  while (next < cases.size() || !running.empty()) {
    while (next < cases.size() && static_cast<int>(running.size()) < options.jobs) {
      int fds[2];
      if (pipe(fds) != 0) {
        std::perror("pipe");
        std::exit(2);
      }
      std::fflush(nullptr);
      const pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        alarm(static_cast<unsigned>(options.time_limit_s + 5));
        const std::string line = Encode(RunCase(options.data + "/" + cases[next].id, options));
        ssize_t unused = write(fds[1], line.data(), line.size());
        (void)unused;
        _exit(0);
      }
      close(fds[1]);
      Child child{pid, fds[0], cases[next], ""};
      fcntl(fds[0], F_SETFL, O_NONBLOCK);
      running.emplace(pid, std::move(child));
      ++next;
    }
    int status = 0;
    const pid_t done = waitpid(-1, &status, 0);
    if (done < 0) break;
    auto it = running.find(done);
    if (it == running.end()) continue;
    Finish(it->second, status, options);
    results.push_back(std::move(it->second.result));
    running.erase(it);
  }
  std::sort(results.begin(), results.end(),
            [](const Result& a, const Result& b) { return a.id < b.id; });
  return results;
}

std::set<std::string> ReadList(const std::string& path) {
  std::set<std::string> ids;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') ids.insert(line);
  }
  return ids;
}

int Usage() {
  std::fprintf(stderr,
               "usage: conformance [--data DIR] [--filter SUBSTR] [--list] [--jobs N]\n"
               "                   [--time-limit SECONDS] [--check FILE] [--update FILE] "
               "[--no-fork] [--fold [--folded-check FILE] [--folded-update FILE]]\n");
  return 64;
}

int Main(int argc, char** argv) {
  Options options;
  // The flags that only switch something on, and those whose value is kept as given.
  const std::map<std::string, bool*> switches = {
      {"--list", &options.list}, {"--no-fork", &options.no_fork}, {"--fold", &options.fold}};
  const std::map<std::string, std::string*> texts = {{"--data", &options.data},
                                                     {"--filter", &options.filter},
                                                     {"--check", &options.check},
                                                     {"--update", &options.update},
                                                     {"--folded-check", &options.folded_check},
                                                     {"--folded-update", &options.folded_update}};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (auto on = switches.find(arg); on != switches.end()) {
      *on->second = true;
    } else if (auto text = texts.find(arg); text != texts.end()) {
      if (!value(text->second)) return Usage();
    } else if (arg == "--jobs") {
      if (!value(&v) || !absl::SimpleAtoi(v, &options.jobs) || options.jobs < 1) return Usage();
    } else if (arg == "--time-limit") {
      if (!value(&v) || !absl::SimpleAtoi(v, &options.time_limit_s) || options.time_limit_s < 1) {
        return Usage();
      }
    } else {
      return Usage();
    }
  }
  std::vector<Result> cases;
  for (const char* folder : kFolders) {
    std::error_code ec;
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(options.data + "/" + folder, ec)) {
      if (e.is_directory()) names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      Result r;
      r.folder = folder;
      r.id = absl::StrCat(folder, "/", name);
      if (options.filter.empty() || absl::StrContains(r.id, options.filter)) cases.push_back(r);
    }
  }
  if (cases.empty()) {
    std::fprintf(stderr, "conformance: no cases under %s\n", options.data.c_str());
    return 2;
  }
  const absl::Time start = absl::Now();
  const std::vector<Result> results = RunAll(cases, options);

  std::map<std::string, std::array<int, 3>> counts;
  int passed = 0;
  for (const Result& r : results) {
    ++counts[r.folder][static_cast<int>(r.outcome)];
    passed += r.outcome == Outcome::kPass;
  }
  if (options.list) {
    for (const Result& r : results) {
      if (r.outcome == Outcome::kPass) continue;
      std::printf("%s %s: %s\n", r.outcome == Outcome::kFail ? "FAIL" : "UNSUPPORTED", r.id.c_str(),
                  r.reason.c_str());
    }
    std::printf("\n");
  }
  std::printf("%-18s %7s %7s %12s %7s\n", "folder", "passed", "failed", "unsupported", "total");
  for (const char* folder : kFolders) {
    auto it = counts.find(folder);
    if (it == counts.end()) continue;
    const auto& c = it->second;
    std::printf("%-18s %7d %7d %12d %7d\n", folder, c[0], c[1], c[2], c[0] + c[1] + c[2]);
  }
  std::printf("overall: %d/%zu passed (%.1f%%) in %.0f s\n", passed, results.size(),
              100.0 * passed / results.size(), absl::ToDoubleSeconds(absl::Now() - start));

  std::set<std::string> passing;
  std::set<std::string> folded;
  for (const Result& r : results) {
    if (r.outcome == Outcome::kPass) passing.insert(r.id);
    if (r.folded) folded.insert(r.id);
  }
  int exit_code = 0;
  if (options.fold) {
    std::printf("fold-constants changed %zu of %zu cases (%zu of them pass)\n", folded.size(),
                results.size(),
                std::count_if(folded.begin(), folded.end(),
                              [&](const std::string& id) { return passing.count(id) > 0; }));
  }
  if (!options.folded_check.empty()) {
    // Every listed case must still be changed by fold-constants (and, when it is an expected
    // pass, pass folded: checked with the other expected passes below).
    const std::set<std::string> expected = ReadList(options.folded_check);
    int lost = 0;
    for (const std::string& id : expected) {
      if (folded.count(id) == 0 && options.filter.empty()) {
        std::printf("NOT FOLDED %s: fold-constants no longer changes it\n", id.c_str());
        ++lost;
      }
    }
    int gained = 0;
    for (const std::string& id : folded) gained += expected.count(id) == 0;
    std::printf("folded check: %zu cases must fold, %d no longer do, %d newly fold%s\n",
                expected.size(), lost, gained,
                gained > 0 ? " (add them with --folded-update)" : "");
    if (lost > 0 || gained > 0) exit_code = 1;
  }
  if (!options.folded_update.empty()) {
    std::ofstream out(options.folded_update, std::ios::trunc);
    out << "# Cases of the ONNX backend test data that fold-constants changes (conformance --fold\n"
           "# --folded-update writes it; --folded-check holds it exactly). One folder/case per "
           "line.\n";
    for (const std::string& id : folded) out << id << "\n";
    if (!out) {
      std::fprintf(stderr, "conformance: cannot write %s\n", options.folded_update.c_str());
      return 4;
    }
    std::printf("folded update: %zu cases listed\n", folded.size());
  }
  if (!options.check.empty()) {
    const std::set<std::string> expected = ReadList(options.check);
    std::set<std::string> ran;
    for (const Result& r : results) ran.insert(r.id);
    int regressions = 0;
    for (const Result& r : results) {
      if (expected.count(r.id) > 0 && r.outcome != Outcome::kPass) {
        std::printf("REGRESSION %s: %s\n", r.id.c_str(), r.reason.c_str());
        ++regressions;
      }
    }
    for (const std::string& id : expected) {
      if (ran.count(id) == 0 && options.filter.empty()) {
        std::printf("REGRESSION %s: case not found\n", id.c_str());
        ++regressions;
      }
    }
    std::printf("check: %zu expected passes, %d regressions\n", expected.size(), regressions);
    if (regressions > 0) exit_code = 1;
  }
  if (!options.update.empty()) {
    // The list only grows: cases that stop passing stay listed (and fail --check).
    std::set<std::string> list = ReadList(options.update);
    const size_t before = list.size();
    list.insert(passing.begin(), passing.end());
    std::ofstream out(options.update, std::ios::trunc);
    out << "# Cases of the ONNX backend test data that must pass (conformance --update adds;\n"
           "# the list only grows). One folder/case per line.\n";
    for (const std::string& id : list) out << id << "\n";
    if (!out) {
      std::fprintf(stderr, "conformance: cannot write %s\n", options.update.c_str());
      return 4;
    }
    std::printf("update: %zu cases listed (%zu added)\n", list.size(), list.size() - before);
  }
  return exit_code;
}

}  // namespace
}  // namespace onnx_bcast::conformance

int main(int argc, char** argv) { return onnx_bcast::conformance::Main(argc, argv); }
