// opt --verify-engine (see engine_verify.h).
#include "engines/engine_verify.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engines/isolated_run.h"
#include "engines/judge.h"
#include "runtime/exec/error_model.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/load_executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"
#include "support/status_macros.h"

namespace onnx_bcast::engines {

absl::StatusOr<EngineVerdict> VerifyOnEngine(const proto::Model& original,
                                             const proto::Model& rewritten,
                                             const engines::EngineFactory& make_engine,
                                             const std::string& engine,
                                             const std::map<std::string, int64_t>& dims,
                                             const std::map<std::string, runtime::ValueRange>& ranges) {
  BCAST_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executor> exec, runtime::LoadExecutor(original));
  runtime::RandomInputOptions options;
  options.seed = 7;
  options.dims = dims;
  options.ranges = ranges;
  BCAST_ASSIGN_OR_RETURN(runtime::Feeds feeds, runtime::RandomInputs(exec->graph(), options));
  exec.reset();
  BCAST_ASSIGN_OR_RETURN(runtime::Reference ref, runtime::ComputeReference(original, feeds));
  engines::EngineJob job;
  for (const auto& [name, value] : feeds) job.inputs.emplace_back(name, value.tensor->Clone());
  for (const runtime::OutputReference& o : ref.outputs) job.output_names.push_back(o.name);
  BCAST_ASSIGN_OR_RETURN(std::string bytes, proto::SerializeSelfContained(rewritten));
  job.model_bytes = std::move(bytes);
  std::vector<engines::EngineJob> jobs;
  jobs.push_back(std::move(job));
  engines::IsolationOptions isolation;
  isolation.parallel = 1;
  isolation.timeout = absl::Seconds(60);
  BCAST_ASSIGN_OR_RETURN(std::vector<engines::EngineOutcome> outcomes,
                         engines::RunIsolated(make_engine, jobs, isolation));
  const engines::EngineOutcome& o = outcomes.front();
  const engines::Judgement j = engines::JudgeOutcome(o, ref);
  EngineVerdict v;
  v.outcome = std::string(engines::OutcomeKindName(o.kind));
  v.max_abs_error = j.max_abs_error;
  v.bound_ratio = j.bound_ratio;
  switch (j.kind) {
    case engines::JudgementKind::kMatches:
      v.line = absl::StrFormat("%s: runs, max abs %.3g (%.2g x the error model's bound)", engine,
                               j.max_abs_error, j.bound_ratio);
      break;
    case engines::JudgementKind::kWrong:
      v.outcome = "wrong";
      v.line = absl::StrCat(engine, ": wrong: ", j.why);
      break;
    case engines::JudgementKind::kRefused:
      v.line = absl::StrCat(engine, ": refused at ", o.stage, ": ", o.message);
      break;
    case engines::JudgementKind::kCrashed:
      v.line = o.signal != 0 ? absl::StrCat(engine, ": crashed (signal ", o.signal, ") at ",
                                            o.stage, ": ", o.message)
                             : absl::StrCat(engine, ": crashed at ", o.stage, ": ", o.message);
      break;
    case engines::JudgementKind::kTimedOut:
      v.line = absl::StrCat(engine, ": timed out at ", o.stage, ": ", o.message);
      break;
  }
  return v;
}

}  // namespace onnx_bcast::engines
