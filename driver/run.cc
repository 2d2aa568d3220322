#include "driver/run.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/exec/input_check.h"
#include "runtime/exec/load_executor.h"
#include "runtime/exec/random_inputs.h"
#include "support/status_macros.h"

namespace onnx_bcast::driver {

absl::StatusOr<std::unique_ptr<runtime::Executor>> PrepareExecutor(const proto::Model& model,
                                                              const ExecutorSettings& settings) {
  support::ProgressStep step(settings.progress, "preparing the executor");
  runtime::RunOptions options;
  options.threads = settings.threads;
  if (settings.max_memory_bytes > 0) options.max_memory_bytes = settings.max_memory_bytes;
  if (settings.max_tensor_elements.has_value()) {
    options.max_tensor_elements = *settings.max_tensor_elements;
  }
  if (runtime::RunProfile* profile = settings.profile; profile != nullptr) {
    options.node_done = [profile](const runtime::Node& node, const std::vector<runtime::Value>& outputs,
                                  double seconds) { profile->Record(node, outputs, seconds); };
    options.node_prepared = [profile](const runtime::Node& node, double seconds, int64_t bytes,
                                      const std::string& label) {
      profile->RecordPrepare(node, seconds, bytes, label);
    };
  }
  BCAST_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executor> exec,
                         runtime::LoadExecutor(model, options, settings.load));
  step.End();
  // Covers every run of this executor (run's --bench included).
  if (settings.timeout_seconds > 0) (exec)->set_timeout(settings.timeout_seconds);
  return exec;
}

absl::Status CheckInputRanges(const onnx::GraphProto& graph,
                              const std::map<std::string, runtime::ValueRange>& ranges) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : graph.initializer()) initializers.insert(t.name());
  std::map<std::string, int32_t> types;
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto& in : graph.input()) {
    if (initializers.count(in.name()) > 0) continue;
    types[in.name()] = in.type().tensor_type().elem_type();
    names.push_back(in.name());
  }
  for (const auto& [name, range] : ranges) {
    auto it = types.find(name);
    if (it == types.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input range ", name, "=", range.ToString(), ": the model has no input '",
                       name, "' (its inputs: ", absl::StrJoin(names, ", "), ")"));
    }
    const auto dtype = static_cast<runtime::DType>(it->second);
    if (runtime::IsSupported(dtype)) BCAST_RETURN_IF_ERROR(runtime::CheckValueRange(name, dtype, range));
  }
  return absl::OkStatus();
}

absl::StatusOr<Inputs> MakeInputs(const runtime::Graph& graph, const InputRequest& request,
                                  const std::string& label) {
  Inputs out;
  // Types, shapes and symbols bound alike across the given inputs and to the dims.
  absl::StatusOr<runtime::SymbolValues> bound =
      runtime::CheckInputs(graph, request.given, request.dims, request.dims_label);
  if (!bound.ok()) {
    out.bad_input = bound.status();
    return out;
  }
  out.bound = *bound;
  std::set<std::string> given;
  for (const auto& [name, value] : request.given) given.insert(name);
  if (!request.random_missing) {
    std::vector<std::string> missing;
    for (const std::string& name : graph.inputs) {
      if (given.count(name) == 0) missing.push_back(name);
    }
    if (missing.empty()) return out;
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": no value for input(s) ", absl::StrJoin(missing, ", ")));
  }
  runtime::RandomInputOptions random;
  random.seed = request.seed;
  random.dims = out.bound;  // the given inputs' symbols size the random ones alike
  random.max_elements = request.max_elements;
  random.ranges = request.ranges;
  BCAST_ASSIGN_OR_RETURN(runtime::Feeds feeds, runtime::RandomInputs(graph, random, given));
  out.random = std::move(feeds);
  return out;
}

absl::StatusOr<RunResult> Run(const proto::Model& model, const RunRequest& request) {
  BCAST_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executor> exec,
                         PrepareExecutor(model, request.executor));
  const runtime::Graph& graph = exec->graph();
  InputRequest inputs = request.inputs;
  if (request.given) {
    BCAST_ASSIGN_OR_RETURN(runtime::Feeds given, request.given(graph));
    inputs.given = std::move(given);
  }
  BCAST_ASSIGN_OR_RETURN(Inputs made, MakeInputs(graph, inputs, model.path));
  if (!made.bad_input.ok()) return made.bad_input;
  runtime::Feeds feeds = std::move(inputs.given);
  for (auto& feed : made.random) feeds.push_back(std::move(feed));
  BCAST_ASSIGN_OR_RETURN(std::vector<runtime::Value> outputs, exec->Run(feeds));
  return RunResult{std::move(outputs), graph.outputs};
}

}  // namespace onnx_bcast::driver
