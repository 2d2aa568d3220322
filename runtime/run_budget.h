// Cooperative cancellation of a run: a wall-clock deadline that the executor checks between
// nodes and that control flow (every Loop/Scan iteration) and long kernels check through their
// OpContext. Kernels see only "stop now?", never the graph.
#ifndef ONNX_BCAST_RUNTIME_RUN_BUDGET_H_
#define ONNX_BCAST_RUNTIME_RUN_BUDGET_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace onnx_bcast::runtime {

/// A deadline for one run (or several). Check() is cheap (one steady-clock read, ~20 ns) and
/// thread-safe; call it per iteration or per chunk of work, not per element.
class RunBudget {
 public:
  using Clock = std::chrono::steady_clock;

  /// No deadline.
  RunBudget() = default;
  /// Expires `seconds` from now; 0 or less means never.
  explicit RunBudget(double seconds) { SetTimeout(seconds); }

  void SetTimeout(double seconds) {
    seconds_ = seconds;
    limited_ = seconds > 0;
    if (limited_) {
      deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(seconds));
    }
  }
  void SetDeadline(Clock::time_point deadline) {
    limited_ = true;
    deadline_ = deadline;
    seconds_ = std::chrono::duration<double>(deadline - Clock::now()).count();
  }

  bool limited() const { return limited_; }
  bool Expired() const { return limited_ && Clock::now() > deadline_; }

  /// DeadlineExceeded naming the limit once the deadline has passed, else OK.
  absl::Status Check() const {
    if (!Expired()) return absl::OkStatus();
    return absl::DeadlineExceededError(
        absl::StrCat("time limit of ", seconds_, " s reached (--timeout)"));
  }

 private:
  bool limited_ = false;
  Clock::time_point deadline_{};
  double seconds_ = 0;
};

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_RUN_BUDGET_H_
