// Progress of long work (loading, analysis, each pass, each verify sample, benchmark runs): the
// library reports named steps to a sink, the CLI decides whether and how they are shown. No ONNX
// here; the default everywhere is no sink, so embedding programs see nothing.
#ifndef ONNX_BCAST_SUPPORT_PROGRESS_H_
#define ONNX_BCAST_SUPPORT_PROGRESS_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace onnx_bcast::support {

/// Receives steps one at a time (steps do not nest): Begin, any number of Update, then End.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  /// A step starts; `what` names it ("pass align-ranks", "verify sample 1/3 (N=2)").
  virtual void Begin(std::string_view what) = 0;
  /// `done` of `total` units of the current step are finished (a bar on a terminal).
  virtual void Update(int64_t done, int64_t total) = 0;
  /// The step ended; `outcome` says how in a few words ("2 nodes inserted", "ok"), or is empty.
  virtual void End(std::string_view outcome) = 0;
  /// A step that ran elsewhere (a child process: check over a folder) and took `seconds`,
  /// told once it is over. By default a Begin and an End at once (the time shown is then
  /// this call's, not the step's).
  virtual void Finished(std::string_view what, std::string_view outcome, double seconds) {
    (void)seconds;
    Begin(what);
    End(outcome);
  }
};

/// One step on a sink that may be null (then every call does nothing). A step left without
/// End (an early error return) ends with the outcome "failed", so the terminal line is closed
/// before the error message is printed.
class ProgressStep {
 public:
  ProgressStep(ProgressSink* sink, std::string_view what) : sink_(sink) {
    if (sink_ != nullptr) sink_->Begin(what);
  }
  ~ProgressStep() { End("failed"); }
  ProgressStep(const ProgressStep&) = delete;
  ProgressStep& operator=(const ProgressStep&) = delete;

  void Update(int64_t done, int64_t total) {
    if (sink_ != nullptr) sink_->Update(done, total);
  }
  void End(std::string_view outcome = "") {
    if (sink_ == nullptr) return;
    sink_->End(outcome);
    sink_ = nullptr;
  }
  /// True when someone is listening (to skip building an outcome nobody reads).
  bool active() const { return sink_ != nullptr; }

 private:
  ProgressSink* sink_;
};

/// `n` with thousands grouped ("200,001"): step lines on large graphs are read at a glance.
inline std::string FormatCount(int64_t n) {
  const std::string digits = std::to_string(n);
  const size_t first = digits[0] == '-' ? 1 : 0;
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > first && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace onnx_bcast::support

#endif  // ONNX_BCAST_SUPPORT_PROGRESS_H_
