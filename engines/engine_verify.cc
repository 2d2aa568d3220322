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
#include "engines/engine_probe.h"
#include "engines/isolated_run.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/load_executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"
#include "support/status_macros.h"

namespace onnx_bcast::driver {

absl::StatusOr<EngineVerdict> VerifyOnEngine(const proto::Model& original,
                                             const proto::Model& rewritten,
                                             const engines::EngineFactory& make_engine,
                                             const std::string& engine,
                                             const std::map<std::string, int64_t>& dims) {
  BCAST_ASSIGN_OR_RETURN(std::unique_ptr<rt::Executor> exec, rt::LoadExecutor(original));
  rt::RandomInputOptions options;
  options.seed = 7;
  options.dims = dims;
  BCAST_ASSIGN_OR_RETURN(rt::Feeds feeds, rt::RandomInputs(exec->graph(), options));
  engines::EngineJob job;
  for (const auto& [name, value] : feeds) job.inputs.emplace_back(name, value.tensor->Clone());
  BCAST_ASSIGN_OR_RETURN(std::vector<rt::Value> expected, exec->Run(feeds));
  job.output_names = exec->graph().outputs;
  BCAST_ASSIGN_OR_RETURN(std::string bytes, proto::SerializeModel(rewritten.proto));
  job.model_bytes = std::move(bytes);
  std::vector<engines::EngineJob> jobs;
  jobs.push_back(std::move(job));
  engines::IsolationOptions isolation;
  isolation.parallel = 1;
  isolation.timeout = absl::Seconds(60);
  BCAST_ASSIGN_OR_RETURN(std::vector<engines::EngineOutcome> outcomes,
                         engines::RunIsolated(make_engine, jobs, isolation));
  const engines::EngineOutcome& o = outcomes.front();
  EngineVerdict v;
  v.outcome = std::string(engines::OutcomeKindName(o.kind));
  switch (o.kind) {
    case engines::OutcomeKind::kRan: {
      std::vector<std::string> wrong;
      double max_abs = 0;
      for (size_t k = 0; k < expected.size(); ++k) {
        const std::string& name = jobs[0].output_names[k];
        const rt::Value& e = expected[k];
        if (k >= o.outputs.size() || e.kind != rt::Value::Kind::kTensor) {
          wrong.push_back(absl::StrCat("output '", name, "' missing"));
          continue;
        }
        const OutputAgreement a = CompareEngineOutput(*e.tensor, o.outputs[k].second);
        if (!a.matches) {
          wrong.push_back(absl::StrCat("'", name, "': ", a.message));
          continue;
        }
        // The largest difference among matching outputs (within tolerance).
        const rt::Tensor& t = o.outputs[k].second;
        if (t.dtype() == rt::DType::kFloat32 && e.tensor->dtype() == rt::DType::kFloat32 &&
            t.num_elements() == e.tensor->num_elements()) {
          const auto x = t.values<float>();
          const auto y = e.tensor->values<float>();
          for (size_t i = 0; i < x.size(); ++i) {
            const double d = std::abs(static_cast<double>(x[i]) - y[i]);
            if (d == d) max_abs = std::max(max_abs, d);
          }
        }
      }
      if (wrong.empty()) {
        v.line = absl::StrFormat("%s: runs, max abs %.3g", engine, max_abs);
      } else {
        v.outcome = "wrong";
        v.line = absl::StrCat(engine, ": wrong: ", absl::StrJoin(wrong, "; "));
      }
      break;
    }
    case engines::OutcomeKind::kRefused:
      v.line = absl::StrCat(engine, ": refused at ", o.stage, ": ", o.message);
      break;
    case engines::OutcomeKind::kCrashed:
      v.line = o.signal != 0 ? absl::StrCat(engine, ": crashed (signal ", o.signal, ") at ",
                                            o.stage, ": ", o.message)
                             : absl::StrCat(engine, ": crashed at ", o.stage, ": ", o.message);
      break;
    case engines::OutcomeKind::kTimedOut:
      v.line = absl::StrCat(engine, ": timed out at ", o.stage, ": ", o.message);
      break;
  }
  return v;
}

}  // namespace onnx_bcast::driver
