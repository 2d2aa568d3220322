// An engine's outcome judged against our reference (see judge.h).
#include "engines/judge.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnx_bcast::engines {

Judgement JudgeOutcome(const EngineOutcome& o, const runtime::Reference& ref, int count) {
  Judgement j;
  switch (o.kind) {
    case OutcomeKind::kRan: {
      const size_t n =
          count < 0 ? ref.outputs.size() : std::min(ref.outputs.size(), static_cast<size_t>(count));
      std::vector<std::string> wrong, notes;
      runtime::CompareOptions options;
      options.engine_representation = true;
      for (size_t k = 0; k < n; ++k) {
        const runtime::OutputReference& want = ref.outputs[k];
        if (k >= o.outputs.size()) {
          wrong.push_back(absl::StrCat("output '", want.name, "' missing"));
          continue;
        }
        runtime::Comparison c = runtime::CompareToReference(
            runtime::Value::Of(std::make_shared<runtime::Tensor>(o.outputs[k].second.Clone())), want,
            ref.model, options);
        j.max_abs_error = std::max(j.max_abs_error, c.max_abs_error);
        j.bound_ratio = std::max(j.bound_ratio, c.bound_ratio);
        if (!c.match) {
          wrong.push_back(n == 1 ? c.message : absl::StrCat("'", want.name, "': ", c.message));
        } else if (!c.message.empty()) {
          notes.push_back(n == 1 ? c.message : absl::StrCat("'", want.name, "': ", c.message));
        }
        j.outputs.push_back(std::move(c));
      }
      j.kind = wrong.empty() ? JudgementKind::kMatches : JudgementKind::kWrong;
      j.why = absl::StrJoin(wrong.empty() ? notes : wrong, "; ");
      break;
    }
    case OutcomeKind::kRefused:
      j.kind = JudgementKind::kRefused;
      j.why = absl::StrCat(o.stage, ": ", o.message);
      break;
    case OutcomeKind::kCrashed:
      j.kind = JudgementKind::kCrashed;
      j.why = o.signal != 0 ? absl::StrCat("signal ", o.signal, " at ", o.stage, ": ", o.message)
                            : absl::StrCat(o.stage, ": ", o.message);
      break;
    case OutcomeKind::kTimedOut:
      j.kind = JudgementKind::kTimedOut;
      j.why = absl::StrCat(o.stage, ": ", o.message);
      break;
  }
  return j;
}

}  // namespace onnx_bcast::engines
