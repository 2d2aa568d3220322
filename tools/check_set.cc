// Many models per check call (see check_set.h).
#include "tools/check_set.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engines/tool_process.h"
#include "support/status_macros.h"

extern char** environ;

namespace onnx_bcast::tools {
namespace {

namespace fs = std::filesystem;

bool IsModelName(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".onnx" || ext == ".onnxtxt";
}

// True when `inner` (canonical) is `root` (canonical) or below it.
bool Within(const fs::path& inner, const fs::path& root) {
  auto r = root.begin(), i = inner.begin();
  for (; r != root.end(); ++r, ++i) {
    if (i == inner.end() || *i != *r) return false;
  }
  return true;
}

struct Running {
  size_t index;
  std::string out, err;
  std::chrono::steady_clock::time_point start;
};

// Starts `self check <model> --json - -q <child_args>` with stdout and stderr going to r's
// files (stdin from /dev/null); r->start is set.
absl::StatusOr<pid_t> SpawnCheck(const std::string& self, const std::string& model,
                                 const std::vector<std::string>& child_args, Running* r) {
  std::vector<std::string> argv = {self, "check", model, "--json", "-", "-q"};
  argv.insert(argv.end(), child_args.begin(), child_args.end());
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, r->out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, r->err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  r->start = std::chrono::steady_clock::now();
  const int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::UnavailableError(absl::StrCat("cannot start a check: ", std::strerror(rc)));
  }
  return pid;
}

// The entry of a check that ended with wait status `status`: its stderr as text, its report
// parsed (exit 0 or 1), a signal or a report that is not JSON as exit 2.
report::CheckSetEntry FinishedCheck(const Running& r, int status, const std::string& model) {
  report::CheckSetEntry e;
  e.path = model;
  e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count();
  e.text = engines::ReadWholeFile(r.err);
  if (WIFEXITED(status)) {
    e.exit_code = WEXITSTATUS(status);
  } else {
    e.exit_code = 2;
    e.text = absl::StrCat(e.path, ": the check ended on signal ", WTERMSIG(status), "\n");
  }
  if (e.exit_code == 0 || e.exit_code == 1) {
    absl::StatusOr<report::Json> doc = report::ParseJson(engines::ReadWholeFile(r.out));
    if (doc.ok()) {
      e.report = *std::move(doc);
    } else {
      e.exit_code = 2;
      e.text =
          absl::StrCat(e.path, ": the check's report is not JSON (", doc.status().message(), ")\n");
    }
  }
  return e;
}

}  // namespace

std::vector<std::string> FindModels(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& p) {
    if (seen.insert(p).second) out.push_back(p);
  };
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec) || p == "-") {
      add(p);
      continue;
    }
    const fs::path root = fs::canonical(p, ec);
    if (ec) {
      add(p);
      continue;
    }
    std::vector<std::string> found;
    // Directory symlinks are not followed (the iterator's default); a file symlink counts only
    // when it resolves inside the folder.
    fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const fs::directory_entry& e = *it;
      if (!IsModelName(e.path())) continue;
      std::error_code ec2;
      if (e.is_symlink(ec2)) {
        const fs::path target = fs::canonical(e.path(), ec2);
        if (ec2 || !Within(target, root) || !fs::is_regular_file(target, ec2)) continue;
      } else if (!e.is_regular_file(ec2)) {
        continue;
      }
      found.push_back(e.path().string());
    }
    std::sort(found.begin(), found.end());
    for (const std::string& f : found) add(f);
  }
  return out;
}

absl::StatusOr<std::vector<report::CheckSetEntry>> CheckModels(
    const std::string& self, const std::vector<std::string>& models,
    const std::vector<std::string>& child_args, int jobs, const CheckDone& done) {
  std::string scratch_template = (fs::temp_directory_path() / "onnx-bcast-check.XXXXXX").string();
  if (::mkdtemp(scratch_template.data()) == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot create a scratch folder: ", std::strerror(errno)));
  }
  const std::string scratch = scratch_template;
  std::vector<report::CheckSetEntry> entries(models.size());
  std::map<pid_t, Running> running;
  size_t next = 0;
  size_t finished = 0;
  absl::Status failure;
  auto start_one = [&](size_t i) -> absl::Status {
    Running r;
    r.index = i;
    r.out = absl::StrCat(scratch, "/", i, ".out");
    r.err = absl::StrCat(scratch, "/", i, ".err");
    BCAST_ASSIGN_OR_RETURN(const pid_t pid, SpawnCheck(self, models[i], child_args, &r));
    running.emplace(pid, std::move(r));
    return absl::OkStatus();
  };
  while (next < models.size() || !running.empty()) {
    while (failure.ok() && next < models.size() && static_cast<int>(running.size()) < jobs) {
      failure = start_one(next++);
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      failure = absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
      break;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const Running& r = it->second;
    entries[r.index] = FinishedCheck(r, status, models[r.index]);
    ::unlink(r.out.c_str());
    ::unlink(r.err.c_str());
    if (done) done(entries[r.index], ++finished, models.size());
    running.erase(it);
  }
  std::error_code ec;
  fs::remove_all(scratch, ec);
  if (!failure.ok()) return failure;
  return entries;
}

}  // namespace onnx_bcast::tools
