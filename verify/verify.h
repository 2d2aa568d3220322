// Differential verification of a rewritten model against its original: both run on the same
// inputs on the bundled executor, outputs compared by name (bit-exact when only exact ops were
// inserted), the first diverging node found by bisecting intermediate tensors, and a local
// per-node check when the whole model cannot run. Verification sits above passes and runtime:
// passes never execute and the runtime never rewrites.
#ifndef ONNX_BCAST_VERIFY_VERIFY_H_
#define ONNX_BCAST_VERIFY_VERIFY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/model_io.h"
#include "report/opt_report.h"
#include "report/report_json.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/error_model.h"
#include "runtime/exec/random_inputs.h"
#include "runtime/memory_budget.h"
#include "runtime/run_budget.h"
#include "support/progress.h"
#include "verify/common_inputs.h"

namespace onnx_bcast::verify {

struct VerifyOptions {
  /// test_data_set directories (ONNX layout); random inputs when empty.
  std::vector<std::string> test_data;
  /// Symbols bound for every sample (verify --dim; the API's and Python's dims=), on top of
  /// the dims one model declares as numbers where the other leaves them symbolic
  /// (CommonInputBindings). `dims_label` names them in messages ("--dim", "dims").
  std::map<std::string, int64_t> dims;
  std::string dims_label = "--dim";
  uint64_t seed = 0;
  /// Value ranges of random inputs by input name (verify --input-range; issue 44 item 5).
  std::map<std::string, runtime::ValueRange> ranges;
  int samples = 3;
  /// Adds a sample with every symbol bound to 0 (empty tensors; skipped when the original
  /// rejects it) and, when the model's combined broadcast condition can be violated, a sample
  /// outside it where both models must fail (one that runs is a mismatch).
  bool edge_cases = false;
  /// Tolerance given by the user; when absent, bit-exact if only exact ops (Reshape, Unsqueeze,
  /// Squeeze, Expand, Shape, Identity, Constant, Flatten, Tile) were inserted or removed,
  /// otherwise the error model (runtime/exec/error_model.h): the rewritten model's outputs
  /// against the original run in float64, within the model's bound.
  std::optional<runtime::Tolerance> tolerance;
  /// Verify node by node only (no whole-model run).
  bool local = false;
  /// An `opt --report` JSON file, or the document itself (report_json, used when report_path
  /// is empty); names the pass and rewrite behind a divergence. A report that cannot be read
  /// or is not such a document fails Verify before any run.
  std::string report_path;
  std::string report_json;
  /// The report in memory (opt --verify hands over its own); used before the two above.
  const report::OptReport* report = nullptr;
  int threads = 1;
  /// The deadline every run of the verification shares (the CLI's --timeout); null: none. A
  /// run past it ends the verification with DeadlineExceeded, not a mismatch.
  const runtime::RunBudget* budget = nullptr;
  /// The bytes the runs may hold at once (the CLI's --max-memory), both models' together; a
  /// run refused by it ends the verification with ResourceExhausted, not a mismatch.
  int64_t max_memory_bytes = runtime::DefaultMaxMemoryBytes();
  /// The budget charged (null: Verify makes one from max_memory_bytes).
  std::shared_ptr<runtime::MemoryBudget> memory;
  /// Told of each sample (or of the node-by-node checks) as a step; null: nobody listens.
  support::ProgressSink* progress = nullptr;
};

/// One graph output in one sample.
struct OutputResult {
  std::string name;
  runtime::Comparison comparison;
};

struct SampleResult {
  /// "test_data_set_0", "random sample 1 (N=2)", "edge case: every dim 0 (N=0; empty
  /// tensors)" or "edge case outside the broadcast condition (N=3)".
  std::string label;
  std::vector<OutputResult> outputs;
  bool match = true;
  std::string error;  ///< set when the rewritten model failed where the original ran
  /// The --edge-cases sample outside the broadcast condition: `match` means both models
  /// failed there, as check says they must.
  bool expect_failure = false;
  std::string note;  ///< for that sample: the node check names and the original's error
  /// Not run: the original model rejects these inputs (they say nothing about the rewrite);
  /// `note` says why. Listed, never dropped silently (issue 44 item 4).
  bool skipped = false;
};

/// The first intermediate tensor whose values differ, in the original's topological order.
struct Divergence {
  std::string sample;
  std::string tensor;
  /// The rewritten model's node producing it: its name; for an unnamed node, the label the
  /// report gives it ("<op>#<index> in the original") when a report names it, else its
  /// position in the rewritten model.
  std::string node;
  /// That node's first output: the identity of an unnamed node, which survives insertions
  /// (opt's report records it with every rewrite).
  std::string node_output;
  std::string op;
  std::vector<std::string> input_shapes;  ///< "name [2,3]" of that node's inputs
  std::string pass;                       ///< from the report, when given and it names the node
  std::string rewrite;                    ///< the report's description of the rewrite
  runtime::Comparison comparison;
};

/// One node checked in isolation (local mode).
struct LocalResult {
  std::string node;
  std::string op;
  bool match = true;
  std::string detail;  ///< the comparison or why it was skipped
  bool skipped = false;
};

struct VerifyResult {
  bool match = true;
  std::string mode;  ///< "whole-model" or "local"
  std::string note;  ///< why local mode was used
  runtime::Tolerance tolerance;
  /// Compared under the error model (no tolerance given, not bit-exact): `error_model` its
  /// constants; `reference_note` says why a sample fell back to rtol 1e-3, atol 1e-7 (no
  /// float64 run), empty when none did.
  bool error_model = false;
  runtime::ErrorModel model;
  std::string reference_note;
  /// Dims fixed for every sample and who fixed them (the text's first line says so); the
  /// samples vary only the symbols both models leave free.
  std::vector<BoundDim> bound;
  std::vector<std::string> structural;  ///< missing or extra graph outputs
  std::vector<SampleResult> samples;
  std::optional<Divergence> divergence;
  std::vector<LocalResult> local;
};

/// Verifies `rewritten` against `original` on inputs both accept: a dim one model declares as
/// a number is bound to it in both (BoundDim), so no sample feeds a model an input its
/// declaration refuses. Errors: IsUsageError when the models accept no common input or
/// `dims` does not fit them; IsBadInputError when a --test-data input contradicts a model's
/// declared type or shape (never fed, as `run` refuses it); InvalidArgument when the original
/// model itself fails on every input. The result carries every mismatch.
absl::StatusOr<VerifyResult> Verify(const proto::Model& original, const proto::Model& rewritten,
                                    const VerifyOptions& options);

/// True when every node type inserted into or removed from `original` to give `rewritten` only
/// moves or copies data (so outputs must be bit-identical).
bool OnlyExactOpsChanged(const proto::Model& original, const proto::Model& rewritten);

/// The readable report: one line per sample and output, the divergence, the local checks.
std::string FormatVerifyText(const VerifyResult& result, const std::string& original_path,
                             const std::string& rewritten_path);

/// The same as data (verify --json, the API's VerifyResult::json, Python's verify dict):
/// docs/report-schema.md.
report::Json VerifyResultJson(const VerifyResult& result, const std::string& original_path,
                              const std::string& rewritten_path);
std::string FormatVerifyJson(const VerifyResult& result, const std::string& original_path,
                             const std::string& rewritten_path);

}  // namespace onnx_bcast::verify

#endif  // ONNX_BCAST_VERIFY_VERIFY_H_
