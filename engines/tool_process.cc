// Scratch files, a converter's process and captured engine output (see tool_process.h).
#include "engines/tool_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace onnx_bcast::engines {

absl::StatusOr<std::string> MakeScratchDir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot create a scratch directory: ", std::strerror(errno)));
  }
  return tmpl;
}

ScratchDir::~ScratchDir() { Remove(); }

absl::Status ScratchDir::Create(const std::string& prefix) {
  absl::StatusOr<std::string> made = MakeScratchDir(prefix);
  if (!made.ok()) return made.status();
  Remove();
  path_ = *std::move(made);
  return absl::OkStatus();
}

std::string ScratchDir::File(const std::string& name) const {
  return absl::StrCat(path_, "/", name);
}

void ScratchDir::Remove() {
  if (path_.empty()) return;
  std::error_code ec;  // best effort: a leftover in the temporary directory harms nothing
  std::filesystem::remove_all(path_, ec);
  path_.clear();
}

std::string CommitLabel(const std::string& repo, const std::string& commit) {
  return commit.empty() ? "" : absl::StrCat(repo, " commit ", commit);
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::Status WriteWholeFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

std::string UniqueLines(std::string_view text) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (absl::string_view raw : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    const std::string line(absl::StripAsciiWhitespace(raw));
    if (!line.empty() && seen.insert(line).second) out.push_back(line);
  }
  return absl::StrJoin(out, "; ");
}

absl::StatusOr<ToolRun> RunTool(const std::vector<std::string>& argv_in,
                                const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<std::string> argv_s = argv_in;
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, argv_s.at(0).c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot run ", argv_s[0], ": ", std::strerror(spawned)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ToolRun run;
  run.log = ReadWholeFile(log_path);
  if (WIFSIGNALED(status)) {
    run.signaled = true;
    run.signal = WTERMSIG(status);
  } else {
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return run;
}

OutputCapture::OutputCapture(std::string path, bool stdout_too) : path_(std::move(path)) {
  std::fflush(stdout);
  std::fflush(stderr);
  const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return;
  for (int target : {1, 2}) {
    if (target == 1 && !stdout_too) continue;
    saved_[target] = dup(target);
    if (saved_[target] >= 0) dup2(fd, target);
  }
  close(fd);
}

OutputCapture::~OutputCapture() { Restore(); }

std::string OutputCapture::Take() {
  Restore();
  std::string text = ReadWholeFile(path_);
  std::remove(path_.c_str());
  return text;
}

void OutputCapture::Restore() {
  // stdout to a file is fully buffered: what the engine printf'ed must reach the file, not
  // the terminal after the restore.
  std::fflush(stdout);
  std::fflush(stderr);
  for (int target : {1, 2}) {
    if (saved_[target] < 0) continue;
    dup2(saved_[target], target);
    close(saved_[target]);
    saved_[target] = -1;
  }
}

}  // namespace onnx_bcast::engines
