// An engine's outcome on a model judged against our reference (runtime/exec/error_model.h):
// the one verdict that probe-engine's cells, the live probes, opt's engine check and the engine
// corpus tests give, so that "runs and matches" means the same everywhere.
#ifndef ONNX_BCAST_ENGINES_JUDGE_H_
#define ONNX_BCAST_ENGINES_JUDGE_H_

#include <string>
#include <vector>

#include "engines/isolated_run.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/error_model.h"

namespace onnx_bcast::engines {

enum class JudgementKind { kMatches, kWrong, kRefused, kCrashed, kTimedOut };

struct Judgement {
  JudgementKind kind = JudgementKind::kCrashed;
  /// kWrong: "'y': 3 of 512 elements differ (...)" per differing output, joined by "; ";
  /// kRefused/kCrashed/kTimedOut: "<stage>: <the engine's message>" (a crash by signal:
  /// "signal N at <stage>: ..."); kMatches: a note on a shape that differs only in 1s, or "".
  std::string why;
  /// Over the outputs compared: the largest absolute error against the reference and the
  /// largest error / bound (how close to the bound the engine came).
  double max_abs_error = 0;
  double bound_ratio = 0;
  /// One comparison per output compared, in order.
  std::vector<runtime::Comparison> outputs;
  bool matches() const { return kind == JudgementKind::kMatches; }
};

/// Judges `o` against the first `count` outputs of `ref` (all when count < 0): each output the
/// engine returned is compared with runtime::CompareToReference in the engine's representation; an
/// output it did not return is wrong.
Judgement JudgeOutcome(const EngineOutcome& o, const runtime::Reference& ref, int count = -1);

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_JUDGE_H_
