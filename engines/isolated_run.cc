// Forked children, one per job, multiplexed with poll() from one thread: the parent keeps no
// engine state and starts no threads, so fork copies nothing an engine could trip over.
#include "engines/isolated_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace onnx_bcast::engines {
namespace {

// The result stream a child writes: 'l' once the model is loaded, then either 'R' and the
// outputs or 'E' and a message (a refusal at the stage the 'l' tells).
constexpr char kLoaded = 'l';
constexpr char kResult = 'R';
constexpr char kError = 'E';
constexpr size_t kStderrKeep = 64 * 1024;

void Put(std::string* out, const void* data, size_t n) {
  out->append(static_cast<const char*>(data), n);
}
template <class T>
void PutValue(std::string* out, T v) {
  Put(out, &v, sizeof(v));
}
void PutString(std::string* out, std::string_view s) {
  PutValue<uint32_t>(out, static_cast<uint32_t>(s.size()));
  out->append(s);
}

std::string EncodeOutputs(const NamedTensors& outputs) {
  std::string out(1, kResult);
  PutValue<uint32_t>(&out, static_cast<uint32_t>(outputs.size()));
  for (const auto& [name, t] : outputs) {
    PutString(&out, name);
    PutValue<int32_t>(&out, static_cast<int32_t>(t.dtype()));
    PutValue<uint32_t>(&out, static_cast<uint32_t>(t.rank()));
    for (int64_t d : t.shape()) PutValue<int64_t>(&out, d);
    PutValue<uint64_t>(&out, t.byte_size());
    Put(&out, t.raw_data(), t.byte_size());
  }
  return out;
}

// Reads what EncodeOutputs wrote; false when the bytes are cut short or malformed.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  template <class T>
  bool Get(T* v) {
    if (data_.size() < sizeof(T)) return false;
    std::memcpy(v, data_.data(), sizeof(T));
    data_.remove_prefix(sizeof(T));
    return true;
  }
  bool GetBytes(size_t n, std::string_view* out) {
    if (data_.size() < n) return false;
    *out = data_.substr(0, n);
    data_.remove_prefix(n);
    return true;
  }
  bool GetString(std::string* s) {
    uint32_t n = 0;
    std::string_view bytes;
    if (!Get(&n) || !GetBytes(n, &bytes)) return false;
    s->assign(bytes);
    return true;
  }
  bool empty() const { return data_.empty(); }

 private:
  std::string_view data_;
};

bool DecodeOutputs(std::string_view bytes, NamedTensors* outputs) {
  Reader r(bytes);
  uint32_t count = 0;
  if (!r.Get(&count)) return false;
  for (uint32_t i = 0; i < count; ++i) {
    std::string name;
    int32_t dtype = 0;
    uint32_t rank = 0;
    if (!r.GetString(&name) || !r.Get(&dtype) || !r.Get(&rank) || rank > 64) return false;
    std::vector<int64_t> shape(rank);
    for (int64_t& d : shape) {
      if (!r.Get(&d)) return false;
    }
    uint64_t n = 0;
    std::string_view data;
    if (!r.Get(&n) || !r.GetBytes(n, &data)) return false;
    const auto type = static_cast<runtime::DType>(dtype);
    if (!runtime::IsSupported(type)) return false;
    absl::StatusOr<runtime::Tensor> t = runtime::Tensor::Allocate(type, shape);
    if (!t.ok() || t->byte_size() != n) return false;
    std::memcpy(t->raw_data(), data.data(), n);
    outputs->emplace_back(std::move(name), std::move(*t));
  }
  return r.empty();
}

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string ErrorRecord(absl::string_view message) {
  std::string out(1, kError);
  PutString(&out, std::string_view(message.data(), message.size()));
  return out;
}

// The child: never returns. Results go to `result_fd`; the engine's own output to the
// captured stderr.
[[noreturn]] void ChildMain(const EngineFactory& make_engine, const EngineJob& job, int result_fd) {
  std::string record;
  try {
    absl::StatusOr<std::unique_ptr<EngineAdapter>> engine = make_engine();
    if (!engine.ok()) {
      record = ErrorRecord(engine.status().message());
    } else if (absl::Status loaded = (*engine)->Load(job.model_bytes); !loaded.ok()) {
      record = ErrorRecord(loaded.message());
    } else {
      WriteAll(result_fd, std::string(1, kLoaded));
      absl::StatusOr<NamedTensors> outputs =
          job.available_only ? (*engine)->RunAvailable(job.inputs, job.output_names)
                             : (*engine)->Run(job.inputs, job.output_names);
      record = outputs.ok() ? EncodeOutputs(*outputs) : ErrorRecord(outputs.status().message());
    }
  } catch (const std::exception& e) {
    // An exception the adapter let through is still the engine's answer.
    record = ErrorRecord(absl::StrCat("uncaught exception: ", e.what()));
  }
  WriteAll(result_fd, record);
  // _exit: no atexit handlers or static destructors of the engine, no flush of stdio buffers
  // copied from the parent.
  _exit(0);
}

struct Child {
  size_t job = 0;
  pid_t pid = -1;
  int result_fd = -1;
  int stderr_fd = -1;
  std::string result;
  std::string err;
  absl::Time deadline;
};

std::string SignalText(int sig) {
  const char* name = strsignal(sig);
  return absl::StrCat("signal ", sig, " (", name != nullptr ? name : "?", ")");
}

EngineOutcome Finish(Child& c, int status, bool timed_out, absl::Duration timeout) {
  EngineOutcome o;
  o.stderr_tail = std::move(c.err);
  absl::string_view result = c.result;
  const bool loaded = absl::ConsumePrefix(&result, absl::string_view(&kLoaded, 1));
  o.stage = loaded ? "run" : "load";
  const std::string last_line = LastMeaningfulLine(o.stderr_tail);
  auto with_stderr = [&](std::string what) {
    if (!last_line.empty()) absl::StrAppend(&what, ": ", last_line);
    return what;
  };
  if (timed_out) {
    o.kind = OutcomeKind::kTimedOut;
    o.message = with_stderr(absl::StrCat("no result within ", absl::FormatDuration(timeout)));
    return o;
  }
  if (WIFSIGNALED(status)) {
    o.kind = OutcomeKind::kCrashed;
    o.signal = WTERMSIG(status);
    o.message = with_stderr(SignalText(o.signal));
    return o;
  }
  if (!result.empty() && result[0] == kError) {
    Reader r(std::string_view(result.data() + 1, result.size() - 1));
    std::string message;
    if (r.GetString(&message)) {
      o.kind = OutcomeKind::kRefused;
      // An adapter that reports nothing still has the engine's log behind it.
      o.message = message.empty() ? last_line : message;
      return o;
    }
  } else if (!result.empty() && result[0] == kResult &&
             DecodeOutputs(std::string_view(result.data() + 1, result.size() - 1), &o.outputs)) {
    o.kind = OutcomeKind::kRan;
    return o;
  }
  o.kind = OutcomeKind::kCrashed;
  o.outputs.clear();
  o.message =
      with_stderr(absl::StrCat("exited with status ", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                               " without a complete result"));
  return o;
}

absl::Status Errno(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::StatusOr<Child> Start(const EngineFactory& make_engine, const EngineJob& job, size_t index,
                            absl::Duration timeout) {
  int result_pipe[2];
  int err_pipe[2];
  if (pipe2(result_pipe, O_CLOEXEC) != 0) return Errno("pipe");
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(result_pipe[0]);
    close(result_pipe[1]);
    return Errno("pipe");
  }
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {result_pipe[0], result_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return Errno("fork");
  }
  if (pid == 0) {
    close(result_pipe[0]);
    close(err_pipe[0]);
    // The engine's stdout and stderr both land in the captured stream.
    dup2(err_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    close(err_pipe[1]);
    ChildMain(make_engine, job, result_pipe[1]);
  }
  close(result_pipe[1]);
  close(err_pipe[1]);
  Child c;
  c.job = index;
  c.pid = pid;
  c.result_fd = result_pipe[0];
  c.stderr_fd = err_pipe[0];
  c.deadline = absl::Now() + timeout;
  return c;
}

// Reads what is available on `fd` into `out` (the stderr buffer keeps its tail only); closes
// it and sets it to -1 at end of file.
void Drain(int* fd, std::string* out, bool tail_only) {
  char buf[65536];
  const ssize_t n = read(*fd, buf, sizeof(buf));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    close(*fd);
    *fd = -1;
    return;
  }
  out->append(buf, static_cast<size_t>(n));
  if (tail_only && out->size() > 2 * kStderrKeep) out->erase(0, out->size() - kStderrKeep);
}

}  // namespace

std::string_view OutcomeKindName(OutcomeKind kind) {
  switch (kind) {
    case OutcomeKind::kRan:
      return "ran";
    case OutcomeKind::kRefused:
      return "refused";
    case OutcomeKind::kCrashed:
      return "crashed";
    case OutcomeKind::kTimedOut:
      return "timed-out";
  }
  return "?";
}

std::string LastMeaningfulLine(std::string_view text) {
  std::string fallback;
  std::string error_line;
  for (absl::string_view raw : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    std::string line(absl::StripAsciiWhitespace(raw));
    // Judged before the log prefix goes: "[ERROR:...]" is what marks OpenCV's error lines.
    const bool error = absl::StrContains(line, "error:") || absl::StrContains(line, "ERROR") ||
                       absl::StrContains(line, "Error");
    // OpenCV's log prefix "[ERROR:0@0.031] global ..." carries a timestamp.
    if (line.size() > 2 && line[0] == '[') {
      const size_t close = line.find(']');
      if (close != std::string::npos) {
        line = std::string(absl::StripAsciiWhitespace(line.substr(close + 1)));
      }
    }
    if (line.empty()) continue;
    fallback = line;
    if (error) error_line = line;
  }
  return error_line.empty() ? fallback : error_line;
}

absl::StatusOr<std::vector<EngineOutcome>> RunIsolated(const EngineFactory& make_engine,
                                                       const std::vector<EngineJob>& jobs,
                                                       const IsolationOptions& options) {
  std::vector<EngineOutcome> outcomes(jobs.size());
  std::vector<Child> running;
  size_t next = 0;
  const int parallel = std::max(1, options.parallel);
  absl::Status failure;
  while (next < jobs.size() || !running.empty()) {
    while (failure.ok() && next < jobs.size() && static_cast<int>(running.size()) < parallel) {
      absl::StatusOr<Child> c = Start(make_engine, jobs[next], next, options.timeout);
      if (!c.ok()) {
        failure = c.status();
        break;
      }
      running.push_back(std::move(*c));
      ++next;
    }
    if (!failure.ok() && running.empty()) return failure;
    std::vector<pollfd> fds;
    std::vector<std::pair<size_t, bool>> owner;  // (child, is_stderr) per pollfd
    absl::Time first_deadline = absl::InfiniteFuture();
    for (size_t i = 0; i < running.size(); ++i) {
      first_deadline = std::min(first_deadline, running[i].deadline);
      if (running[i].result_fd >= 0) {
        fds.push_back({running[i].result_fd, POLLIN, 0});
        owner.emplace_back(i, false);
      }
      if (running[i].stderr_fd >= 0) {
        fds.push_back({running[i].stderr_fd, POLLIN, 0});
        owner.emplace_back(i, true);
      }
    }
    const int64_t wait_ms =
        std::max<int64_t>(0, absl::ToInt64Milliseconds(first_deadline - absl::Now()) + 1);
    if (!fds.empty()) {
      const int ready =
          poll(fds.data(), fds.size(), static_cast<int>(std::min<int64_t>(wait_ms, 1000)));
      if (ready < 0 && errno != EINTR) return Errno("poll");
      for (size_t k = 0; ready > 0 && k < fds.size(); ++k) {
        if (fds[k].revents == 0) continue;
        Child& c = running[owner[k].first];
        if (owner[k].second) {
          Drain(&c.stderr_fd, &c.err, /*tail_only=*/true);
        } else {
          Drain(&c.result_fd, &c.result, /*tail_only=*/false);
        }
      }
    }
    // Children whose streams are closed have finished (or closed them, which ends them too);
    // children past their deadline are killed.
    const absl::Time now = absl::Now();
    for (size_t i = 0; i < running.size();) {
      Child& c = running[i];
      const bool done = c.result_fd < 0 && c.stderr_fd < 0;
      const bool late = !done && now >= c.deadline;
      if (!done && !late) {
        ++i;
        continue;
      }
      if (late) kill(c.pid, SIGKILL);
      int status = 0;
      while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
      }
      for (int* fd : {&c.result_fd, &c.stderr_fd}) {
        if (*fd >= 0) close(*fd);
        *fd = -1;
      }
      outcomes[c.job] = Finish(c, status, late, options.timeout);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  if (!failure.ok()) return failure;
  return outcomes;
}

}  // namespace onnx_bcast::engines
