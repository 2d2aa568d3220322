// Helpers shared by the pass tests: a stable printed form of a model for golden comparisons,
// and running a pass or a target in-process.
#ifndef ONNX_BCAST_TESTS_SUPPORT_PASS_TEST_UTIL_H_
#define ONNX_BCAST_TESTS_SUPPORT_PASS_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"
#include "proto/model_io.h"
#include "targets/form_oracle.h"
#include "targets/targets.h"

namespace onnx_bcast::test_support {

/// "opset: N", one "init NAME: TYPE[dims]" line per initializer, then libonnx's printed graph
/// (whose printer leaves initializers out), then each model-local function.
std::string GoldenForm(const onnx::ModelProto& model);

/// Parses ONNX text or fails the test.
proto::Model Parse(const std::string& text);

/// The bundled executor as fold-constants' evaluator (RunPass and RunTarget use it when the
/// options name none).
const passes::ConstantEvaluator* Executor();

/// Runs the named pass once.
absl::Status RunPass(const std::string& name, proto::Model* model,
                     passes::PassStats* stats = nullptr, const passes::PassOptions& options = {});

/// Runs a target's pipeline (with verify_each).
absl::Status RunTarget(const targets::TargetProfile& target, proto::Model* model,
                       std::vector<passes::PassRun>* runs = nullptr,
                       const passes::PassOptions& options = {});

/// A live form oracle by rule, for tests without an engine: every fragment runs and matches
/// except those with a node listed in `wrong` as "Op@rank" (the node's output rank), e.g.
/// {"Sub@3"}: OpenCV 4.6's `[1,1,32] - [1,1,1]` (issue 35), or "Op@rank*" (only where an
/// operand's dims differ from the output's). Counts the fragments it saw.
class ScriptedOracle : public targets::FormOracle {
 public:
  explicit ScriptedOracle(std::vector<std::string> wrong) : wrong_(std::move(wrong)) {}
  std::string label() const override { return "scripted 1.0"; }
  std::vector<absl::StatusOr<targets::LiveVerdict>> Decide(
      const std::vector<const proto::Model*>& fragments) override;
  std::string Summary() const override { return "scripted 1.0"; }
  int calls = 0;
  std::vector<onnx::GraphProto> seen;

 private:
  std::vector<std::string> wrong_;
};

/// "node: why" for each violation CheckTarget finds (over `tables` when given); a failed check
/// fails the test.
std::vector<std::string> ViolationLines(const proto::Model& model,
                                        const targets::TargetProfile& profile,
                                        const analysis::ShapeTables* tables = nullptr);

/// The message ParseTargetProfile gives for a profile file "f" of a name, the class `same` and
/// `line` (line 3).
std::string ProfileLineError(const std::string& line);

/// `text`, the printed form of `p`, parses back to `p`'s op rules and prints as `text` again.
void ExpectProfileRoundTrips(const targets::TargetProfile& p, const std::string& text);

/// Every broadcasting node (main graph) with operands of different rank / different shape.
std::vector<std::string> RankMismatches(const proto::Model& model);
std::vector<std::string> ShapeMismatches(const proto::Model& model);

}  // namespace onnx_bcast::test_support

#endif  // ONNX_BCAST_TESTS_SUPPORT_PASS_TEST_UTIL_H_
