// Test support: running the onnx-bcast CLI as a child process (fork/exec, no shell), for the
// end-to-end, hostile-input and kill-during-save tests. Header-only; each test binary passes the
// CLI path (its BCAST_CLI definition).
#ifndef ONNX_BCAST_TESTS_SUPPORT_CLI_PROCESS_H_
#define ONNX_BCAST_TESTS_SUPPORT_CLI_PROCESS_H_

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace onnx_bcast::test_support {

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  // In one read: a character-at-a-time iterator loop is slow in the tests' unoptimized
  // sanitizer build (most of a second for an 8 MB model).
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

/// In a forked child: replaces the process with `bin args...`; exit 127 when exec fails.
[[noreturn]] inline void ExecCli(const std::string& bin, const std::vector<std::string>& args) {
  std::vector<std::string> copy = args;
  std::string program = bin;
  std::vector<char*> argv = {program.data()};
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(program.c_str(), argv.data());
  ::_exit(127);
}

/// Starts `bin args...` with stdout and stderr sent to the given files ("/dev/null" to drop),
/// and stdin read from `in_path` when one is given.
/// The child exits 126 when it cannot open them and 127 when exec fails.
inline pid_t SpawnCli(const std::string& bin, const std::vector<std::string>& args,
                      const std::string& out_path, const std::string& err_path,
                      const std::string& in_path = "") {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (std::freopen(out_path.c_str(), "w", stdout) == nullptr ||
        std::freopen(err_path.c_str(), "w", stderr) == nullptr ||
        (!in_path.empty() && std::freopen(in_path.c_str(), "r", stdin) == nullptr)) {
      ::_exit(126);
    }
    ExecCli(bin, args);
  }
  return pid;
}

/// The child's exit code, or 128 + signal number when a signal ended it (as a shell reports).
inline int WaitExitCode(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct CliResult {
  int code = -1;
  std::string out, err;
};

/// Runs `bin args...` to completion; stdout and stderr pass through files in `scratch` (which
/// must exist) and come back in the result.
inline CliResult RunCliIn(const std::string& bin, const std::vector<std::string>& args,
                          const std::string& scratch) {
  const std::string out_path = scratch + "/stdout", err_path = scratch + "/stderr";
  CliResult r;
  r.code = WaitExitCode(SpawnCli(bin, args, out_path, err_path));
  r.out = ReadAll(out_path);
  r.err = ReadAll(err_path);
  return r;
}

}  // namespace onnx_bcast::test_support

#endif  // ONNX_BCAST_TESTS_SUPPORT_CLI_PROCESS_H_
