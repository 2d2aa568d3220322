// The public C++ API of onnx-bcast, for converters that embed its broadcast checks, rewrites,
// executor and verifier instead of shelling out to the CLI. One header; everything it returns
// is plain data. Installed as <onnx_bcast/onnx_bcast.h>; link `onnx_bcast::onnx_bcast`.
//
// Every function returns absl::Status or absl::StatusOr and never throws: errors from the
// layers beneath (protobuf, libonnx, allocation) are turned into a Status whose one-line
// message names the file, node, op, shapes and rule involved. Codes: InvalidArgument for a bad
// model or bad options, NotFound for a missing file, Unimplemented for what is not supported,
// ResourceExhausted past a limit, FailedPrecondition/PermissionDenied when an output cannot be
// written.
//
// Models: onnx::ModelProto is part of this API by design (converters already hold one), so
// this header includes <onnx/onnx_pb.h> from libonnx; every function also has a path
// overload. A ModelProto given in memory is validated like a loaded file (LoadOptions limits).
// Its external data, if any, resolves against LoadOptions::base_dir.
//
// Thread safety: functions share no state; concurrent calls on different models are safe.
#ifndef ONNX_BCAST_API_INCLUDE_ONNX_BCAST_ONNX_BCAST_H_
#define ONNX_BCAST_API_INCLUDE_ONNX_BCAST_ONNX_BCAST_H_

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"  // onnx::ModelProto is an API type (see above)

#if defined(__GNUC__)
#define ONNX_BCAST_API __attribute__((visibility("default")))
#else
#define ONNX_BCAST_API
#endif

namespace onnx_bcast {

// ---------------------------------------------------------------------------------------------
// Library facts
// ---------------------------------------------------------------------------------------------

/// The library version, e.g. "0.1.0".
ONNX_BCAST_API std::string Version();

/// A rewrite pass or a built-in target: its name and a one-line summary.
struct PassInfo {
  std::string name;     ///< e.g. "align-ranks"; what OptimizeOptions::passes takes
  std::string summary;  ///< for a target: its passes, comma-separated
};

/// Every rewrite pass, in registry order.
ONNX_BCAST_API std::vector<PassInfo> ListPasses();

/// The built-in targets, each with its passes: the normal forms "explicit", "none" and
/// "canonical", and the engines measured by probe-engine, "ncnn", "opencv" and "mnn".
ONNX_BCAST_API std::vector<PassInfo> ListTargets();

// ---------------------------------------------------------------------------------------------
// Loading and saving
// ---------------------------------------------------------------------------------------------

/// Limits applied to every model the API reads (file or memory). The defaults admit every
/// real model and refuse the blow-ups hostile files use to exhaust memory.
struct LoadOptions {
  int64_t max_file_bytes = (int64_t{2} << 30) - 1;
  int max_nesting = 100;
  int64_t max_nodes = 20'000'000;
  int64_t max_tensor_elements = int64_t{1} << 36;
  /// Directory that external-data locations of an in-memory model are relative to. Path
  /// overloads use the model file's own directory instead.
  std::string base_dir = ".";
};

/// Loads a binary .onnx file, or ONNX text form when the name ends in ".onnxtxt". External
/// data stays referenced (not read); keep the file's directory as LoadOptions::base_dir when
/// passing the result to the in-memory overloads below.
ONNX_BCAST_API absl::StatusOr<onnx::ModelProto> LoadModel(const std::string& path,
                                                          const LoadOptions& options = {});

/// Parses serialized model bytes (what ModelProto::SerializeToString gives).
ONNX_BCAST_API absl::StatusOr<onnx::ModelProto> ParseModel(std::string_view bytes,
                                                           const LoadOptions& options = {});

/// Serializes deterministically.
ONNX_BCAST_API absl::StatusOr<std::string> SerializeModel(const onnx::ModelProto& model);

struct SaveOptions {
  /// Move initializer payloads of at least `external_threshold_bytes` to "<path>.data".
  bool external_data = false;
  int64_t external_threshold_bytes = 1024;
  /// Directory that the model's existing external-data locations are relative to (they are
  /// carried beside the output when it goes elsewhere).
  std::string base_dir = ".";
};

/// Saves atomically (temporary file, fsync, rename): on error the destination is untouched.
ONNX_BCAST_API absl::Status SaveModel(const onnx::ModelProto& model, const std::string& path,
                                      const SaveOptions& options = {});

// ---------------------------------------------------------------------------------------------
// Check: a verdict for every broadcasting node (what `onnx-bcast check` reports)
// ---------------------------------------------------------------------------------------------

enum class Verdict {
  kProven,       ///< valid for every value of the symbolic dims
  kError,        ///< invalid (or its conditions contradict those of other nodes)
  kConditional,  ///< valid exactly when NodeVerdict::condition holds
  kUnknown,      ///< cannot be decided: an unknown dim or rank
};

/// "ok", "error", "conditional", "unknown" (the CLI's and the JSON report's words).
ONNX_BCAST_API const char* VerdictName(Verdict verdict);

struct NodeVerdict {
  std::string graph;  ///< "main", or a subgraph path such as "main/If 'cond'.then_branch"
  std::string node;   ///< node name, or "<op>#<index>" when unnamed
  std::string op;
  std::string domain;
  int64_t opset = 0;
  std::vector<std::string> input_names;
  std::vector<std::string> input_shapes;  ///< "[N,3,?]"; "?" for an unknown rank
  std::string output_shape;
  std::string rule;             ///< broadcast rule family, e.g. "numpy", "legacy-axis"
  std::string broadcast_class;  ///< e.g. "same", "scalar", "per-channel", "general"
  Verdict verdict = Verdict::kProven;
  std::string condition;  ///< for kConditional: e.g. "N == 1 or N == 3"
  /// For kConditional: the symbols the condition mentions, sorted.
  std::vector<std::string> condition_symbols;
  std::string message;             ///< one line naming node, op, shapes, rule and reason (non-ok)
  std::vector<std::string> lints;  ///< "class: message" (CheckOptions::lint)
  /// With CheckOptions::dims: "holds", "fails", "conditional" (needs unbound symbols) or
  /// "unknown" at those dims; empty otherwise.
  std::string at_dims;
  /// With CheckOptions::dims: for "fails", the error at those dims (node, op, shapes with the
  /// numbers substituted, rule), as a proven error reads; for "conditional", the condition.
  std::string at_dims_message;
};

struct CheckOptions {
  /// Also warn about broadcasts that engines interpret differently.
  bool lint = false;
  /// Symbolic dims bound to values (`check --dim NAME=VALUE`): each node is also evaluated
  /// there. A name the model has no symbol for, or a value below 1, is InvalidArgument (the
  /// message lists the model's symbols). Empty: no evaluation.
  std::map<std::string, int64_t> dims;
  LoadOptions load;
};

struct ONNX_BCAST_API CheckResult {
  std::vector<NodeVerdict> nodes;
  /// The conditions of all nodes combined (symbols are model-wide); empty when none.
  std::string combined_condition;
  /// Non-empty when the combined conditions contradict; names the symbol and the nodes.
  std::string contradiction;
  /// Set when libonnx shape inference could not run (shapes then come from the rules only).
  std::string inference_note;
  /// The report exactly as `onnx-bcast check` prints it, and as `check --json` writes it.
  std::string text;
  std::string json;
  /// CheckOptions::dims as evaluated; empty without.
  std::map<std::string, int64_t> dims;
  /// With dims: the index of the first node that fails there, -1 when none does.
  int64_t first_failure_at_dims = -1;
  /// With dims: symbols that conditions still need and that are not bound, sorted.
  std::vector<std::string> unbound_at_dims;

  int64_t Count(Verdict verdict) const;
  /// True when a node is proven wrong, the combined conditions contradict, or (with dims) a
  /// node fails at those dims (the CLI's exit 1).
  bool HasError() const;
  /// OK, or InvalidArgument carrying the first error's message (node, op, shapes, rule); with
  /// dims, the first failure there.
  absl::Status ErrorStatus() const;
};

/// Analyzes every broadcasting node, subgraphs and model-local functions included. A model
/// with broadcast errors is a successful check (the errors are in the result); the status is
/// an error only when the model cannot be read or analyzed.
ONNX_BCAST_API absl::StatusOr<CheckResult> Check(const onnx::ModelProto& model,
                                                 const CheckOptions& options = {});
ONNX_BCAST_API absl::StatusOr<CheckResult> Check(const std::string& path,
                                                 const CheckOptions& options = {});

/// The values of one input's random elements (the CLI's `--input-range NAME=LO:HI`; issue 44):
/// floating-point inputs uniform in [lo, hi]; integer and bool inputs whole numbers in
/// [lo, hi] (an attention mask {0, 1}: lo 0, hi 1); `integers` gives a floating-point input
/// whole numbers too (a float mask of exactly 0.0 and 1.0). A range naming no input of the
/// model, with lo > hi, or that the input's type cannot hold (a fraction for an integer input)
/// is InvalidArgument.
struct InputRange {
  double lo = 0;
  double hi = 0;
  bool integers = false;
};

// ---------------------------------------------------------------------------------------------
// Optimize: rewrite broadcasts for a target (what `onnx-bcast opt` does)
// ---------------------------------------------------------------------------------------------

struct OptimizeOptions {
  /// Give at most one of the three; with none, the default target "explicit" (as `opt`).
  /// passes = {"none"} only validates the model.
  std::string target;               ///< a built-in target (ListTargets())
  std::string target_file;          ///< a target profile file (see targets/targets.h format)
  std::vector<std::string> passes;  ///< pass names (ListPasses()), run in order
  /// Fold a broadcast constant into an initializer up to this many bytes.
  int64_t fold_limit_bytes = 4096;
  /// fold-constants replaces a computed value by an initializer up to this many bytes.
  int64_t constant_fold_limit_bytes = int64_t{1} << 20;
  /// Symbols to bind before the passes (opt --dim): the declared shapes get these numbers.
  /// A name the model does not have is InvalidArgument listing its symbols; a binding that
  /// breaks a broadcast is InvalidArgument naming the node (as check's dims).
  std::map<std::string, int64_t> dims;
  /// Every dim of a graph input (opt --input-shape NAME=d0,d1,...), named or not.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  /// Validate the graph with libonnx's checker after every pass.
  bool verify_each = false;
  /// With a target: by default a node left outside the target's form (listed in
  /// OptimizeReport::violations) fails Optimize with Unimplemented naming every such node,
  /// and the model is left untouched; true keeps the partial rewrite and only reports them.
  bool allow_partial = false;
  /// The target's engine, where this library was built with its adapter (the CLI's defaults,
  /// `opt --no-live-probe`, `--no-verify-engine`, `--verify-engine`, `--probe-cache`):
  /// live_probe decides broadcast forms by running them on the engine at their exact shapes;
  /// verify_engine runs the result on the engine at the bound dims before returning it, and a
  /// result the engine refuses, crashes on or computes wrongly fails Optimize
  /// (Aborted, naming the first node that differs there; the model is left untouched);
  /// require_engine makes a build without the target's engine InvalidArgument instead of a
  /// note in OptimizeReport::engine_note.
  bool live_probe = true;
  bool verify_engine = true;
  bool require_engine = false;
  std::string probe_cache;
  /// The values of the engine check's random inputs, by input name (opt --input-range).
  std::map<std::string, InputRange> input_ranges;
  LoadOptions load;
};

/// One node outside the target's form: where it is, what it is, and the rule it breaks.
struct Violation {
  std::string graph;  ///< "main", or the path of an If/Loop/Scan body or function call site
  std::string node;   ///< name, or "<op>#<index>" (its index in the input model) when unnamed
  std::string op;
  std::string shapes;  ///< the operands' shapes, e.g. "[1,20,120] and [120]"
  std::string rule;    ///< the rule of the target's table it breaks, or why it cannot be proven
  bool cannot_prove = false;  ///< may conform, but the analysis cannot show it
  /// What would make it fit, when the rule says: "bind N, H with OptimizeOptions::dims";
  /// empty otherwise (a size only the data decides, a form no binding changes).
  std::string hint;
};

/// The payload (absl::Status::GetPayload) of an Optimize error that refuses the result (a
/// target not met: Unimplemented; a result the target's engine does not run correctly:
/// Aborted; a dims binding that breaks a broadcast: InvalidArgument): OptimizeReport::json of
/// the refused rewrite, with "violation_details", "engine" and "refused" (the same document as
/// `opt --report` writes on a refusal).
inline constexpr char kOptReportPayload[] = "type.onnx-bcast/opt-report";

/// One rewrite of one node.
struct Rewrite {
  std::string node;  ///< name, or "<op>#<index>" (its index in the input model) when unnamed
  /// The node's first output (main graph): an identity that insertions do not shift.
  std::string output;
  std::string op;
  std::string action;  ///< "inserted", "folded", "removed", "upgraded", "shrunk", "converted"
  std::string tensor;
  std::string detail;  ///< e.g. "Unsqueeze axes [0,1]"
  std::string before;  ///< shape before, e.g. "[3]"
  std::string after;   ///< shape after, e.g. "[1,1,3]"
  int64_t bytes = 0;   ///< initializer bytes added (negative: saved)
};

/// What one pass did.
struct PassReport {
  std::string pass;
  int64_t nodes_inserted = 0;
  int64_t nodes_removed = 0;
  int64_t initializers_rewritten = 0;
  int64_t bytes_added = 0;
  double seconds = 0;
  std::vector<Rewrite> rewrites;
};

struct ModelStats {
  int64_t nodes = 0;
  int64_t initializers = 0;
  int64_t initializer_bytes = 0;  ///< inline payloads only
  int64_t opset = 0;
};

struct ONNX_BCAST_API OptimizeReport {
  std::string target;  ///< the target's name; empty for an explicit pass list
  std::vector<PassReport> passes;
  ModelStats before;
  ModelStats after;
  /// Nodes still outside the target's table afterwards (one message each), and as records.
  std::vector<std::string> violations;
  std::vector<Violation> violation_details;
  /// Nodes the table puts outside the target's form that the model as given already had, in a
  /// model the target's engine runs and matches as given: never a refusal.
  std::vector<std::string> waived;
  /// The engine check (OptimizeOptions::verify_engine): the outcome ("ran", "wrong",
  /// "refused", "crashed", "timed-out"; empty when not run), its one line, the dims it ran at,
  /// and why it was not run (no adapter in this build, turned off) when it was not.
  std::string engine_outcome;
  std::string engine_line;
  std::string engine_dims;
  std::string engine_note;
  /// The per-pass lines `onnx-bcast opt` prints, and the JSON of `opt --report`.
  std::string text;
  std::string json;

  /// True when any pass rewrote anything.
  bool Changed() const;
};

/// Rewrites `*model` in place. On error `*model` is left exactly as it was. Errors:
/// InvalidArgument for an unknown pass or target, conflicting options, or a bad model (naming
/// node, op, shapes and rule); Unimplemented for what a pass cannot handle; Internal when a
/// pass broke the graph.
ONNX_BCAST_API absl::StatusOr<OptimizeReport> Optimize(onnx::ModelProto* model,
                                                       const OptimizeOptions& options);
/// Loads `input_path`, rewrites it and saves it to `output_path` (which must differ from
/// `input_path`); nothing is written on error.
ONNX_BCAST_API absl::StatusOr<OptimizeReport> Optimize(const std::string& input_path,
                                                       const std::string& output_path,
                                                       const OptimizeOptions& options,
                                                       const SaveOptions& save = {});

// ---------------------------------------------------------------------------------------------
// Run: the reference CPU executor (what `onnx-bcast run` uses)
// ---------------------------------------------------------------------------------------------

/// Element types, numbered as onnx::TensorProto::DataType.
enum class DataType : int32_t {
  kFloat = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,  ///< one byte per element, 0 or 1
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
};

/// Bytes per element; 0 for a value outside the enum.
ONNX_BCAST_API size_t DataTypeSize(DataType dtype);

/// "float32", "int64", ... as ONNX spells them.
ONNX_BCAST_API const char* DataTypeName(DataType dtype);

/// The DataType of a C++ element type (float, double, the fixed-width integers, bool).
template <class T>
constexpr DataType DataTypeOf() {
  if constexpr (std::is_same_v<T, float>)
    return DataType::kFloat;
  else if constexpr (std::is_same_v<T, double>)
    return DataType::kDouble;
  else if constexpr (std::is_same_v<T, bool>)
    return DataType::kBool;
  else if constexpr (std::is_same_v<T, int8_t>)
    return DataType::kInt8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return DataType::kInt16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DataType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DataType::kInt64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return DataType::kUInt8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return DataType::kUInt16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return DataType::kUInt32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return DataType::kUInt64;
  else
    static_assert(sizeof(T) == 0, "no onnx_bcast::DataType for this element type");
}

/// A dense row-major tensor: its element type, dims and raw little-endian element bytes.
struct Tensor {
  DataType dtype = DataType::kFloat;
  std::vector<int64_t> dims;  ///< empty for a scalar (one element)
  std::string data;           ///< num_elements() * DataTypeSize(dtype) bytes

  int64_t num_elements() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }

  /// A tensor of `dims` holding `values` (row-major).
  template <class T>
  static Tensor From(std::vector<int64_t> dims, const std::vector<T>& values) {
    Tensor t;
    t.dtype = DataTypeOf<T>();
    t.dims = std::move(dims);
    t.data.resize(values.size() * sizeof(T));
    if constexpr (std::is_same_v<T, bool>) {
      for (size_t i = 0; i < values.size(); ++i) t.data[i] = values[i] ? 1 : 0;
    } else if (!values.empty()) {
      std::memcpy(t.data.data(), values.data(), t.data.size());
    }
    return t;
  }

  /// The elements as T; InvalidArgument when T is not the tensor's element type.
  template <class T>
  absl::StatusOr<std::vector<T>> Values() const {
    if (DataTypeOf<T>() != dtype) {
      return absl::InvalidArgumentError(std::string("tensor holds ") + DataTypeName(dtype) +
                                        ", not " + DataTypeName(DataTypeOf<T>()));
    }
    std::vector<T> out(data.size() / sizeof(T));
    if constexpr (std::is_same_v<T, bool>) {
      for (size_t i = 0; i < out.size(); ++i) out[i] = data[i] != 0;
    } else if (!out.empty()) {
      std::memcpy(out.data(), data.data(), out.size() * sizeof(T));
    }
    return out;
  }
};

/// Graph inputs by name (an entry may also override an initializer).
using TensorMap = std::map<std::string, Tensor>;
/// Graph outputs by name, in the graph's output order.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

struct RunOptions {
  /// Threads per kernel (the caller counts as one).
  int threads = 1;
  /// Inputs not given are filled with seeded random values (floats in [-1, 1), integers in
  /// [0, 10)) instead of being an error; symbolic dims bind through `dims` (default 1).
  bool random_missing_inputs = false;
  uint64_t seed = 0;
  std::map<std::string, int64_t> dims;
  /// The values of random inputs, by input name (run --input-range).
  std::map<std::string, InputRange> input_ranges;
  /// Refuse (ResourceExhausted) any tensor computed with more elements than this.
  int64_t max_tensor_elements = int64_t{1} << 32;
  /// Refuse (ResourceExhausted naming the node) an allocation that would take the bytes the
  /// run holds past this; 0: a quarter of physical memory (the CLI's --max-memory default).
  int64_t max_memory_bytes = 0;
  LoadOptions load;
};

/// Runs the model's main graph on the bundled executor. Errors name the failing node; a
/// missing or mistyped input is InvalidArgument naming it; an op without a kernel or an output
/// that is not a tensor (sequence, optional) is Unimplemented.
ONNX_BCAST_API absl::StatusOr<NamedTensors> Run(const onnx::ModelProto& model,
                                                const TensorMap& inputs,
                                                const RunOptions& options = {});
ONNX_BCAST_API absl::StatusOr<NamedTensors> Run(const std::string& path, const TensorMap& inputs,
                                                const RunOptions& options = {});

// ---------------------------------------------------------------------------------------------
// Verify: do two models compute the same outputs? (what `onnx-bcast verify` does)
// ---------------------------------------------------------------------------------------------

struct VerifyOptions {
  /// ONNX test_data_set directories; seeded random inputs when empty.
  std::vector<std::string> test_data;
  uint64_t seed = 0;
  /// Random input sets: symbolic dims bound to 1 in the first, to distinct values > 1 after.
  int samples = 3;
  /// Add a sample with every symbolic dim bound to 0.
  bool edge_cases = false;
  /// The values of the random samples' inputs, by input name (verify --input-range).
  std::map<std::string, InputRange> input_ranges;
  /// Symbols bound in every sample (`verify --dim`). Without them, a dim one model declares as
  /// a number and the other leaves symbolic is bound to that number anyway (VerifyResult::
  /// bound): samples feed only inputs both models accept. A name neither model's inputs have,
  /// or a value a model's declaration contradicts, is InvalidArgument naming the dims; so are
  /// two models that accept no common input.
  std::map<std::string, int64_t> dims;
  /// Tolerances; when neither is set: bit-exact if only data-movement ops (Reshape, Unsqueeze,
  /// Expand, ...) were inserted or removed, else rtol 1e-3, atol 1e-7.
  std::optional<double> rtol;
  std::optional<double> atol;
  /// Check node by node only (no whole-model run).
  bool local = false;
  int threads = 1;
  /// The rewrite's report, to name the pass behind a divergence: an `opt --report` file, or
  /// the document itself (OptimizeReport::json; used when report_path is empty). A report
  /// that cannot be read (NotFound) or is not such a document (InvalidArgument) fails Verify.
  std::string report_path;
  std::string report_json;
  LoadOptions load;
};

/// One graph output compared in one sample.
struct OutputComparison {
  std::string sample;  ///< "random sample 1 (N=1)", "test_data_set_0", ...
  std::string output;
  bool match = true;
  double max_abs_error = 0;
  double max_rel_error = 0;
  int64_t max_ulp = 0;  ///< largest distance in units in the last place (floating types)
  int64_t mismatches = 0;
  std::string message;  ///< when !match: first differing index, both values, counts
};

/// The first intermediate tensor whose values differ.
struct Divergence {
  std::string sample;
  std::string tensor;
  /// The rewritten model's node producing it; for an unnamed node, the report's label when a
  /// report names it, else its position in the rewritten model ("Add#2").
  std::string node;
  std::string node_output;  ///< that node's first output (an unnamed node's identity)
  std::string op;
  std::vector<std::string> input_shapes;  ///< "name [2,3]"
  std::string message;
  std::string pass;     ///< the pass whose rewrite produced `node` (with a report), else empty
  std::string rewrite;  ///< that rewrite as the report describes it
};

/// One node checked in isolation (local mode).
struct LocalCheck {
  std::string node;
  std::string op;
  bool match = true;
  bool skipped = false;
  std::string detail;  ///< the comparison, or why the node was skipped
};

/// A dim fixed for every sample of a verification, and who fixed it.
struct BoundDim {
  std::string symbol;  ///< a dim_param, or "<input>:<axis>" for an unnamed input dim
  int64_t value = 0;
  std::string by;  ///< "the rewritten model", "the original model" or "VerifyOptions::dims"
};

struct VerifyResult {
  bool match = true;
  /// Dims fixed for every sample (the text's first line says so); samples vary only the
  /// symbols both models leave free.
  std::vector<BoundDim> bound;
  std::string mode;  ///< "whole-model" or "local"
  std::string note;  ///< why local mode was used
  double rtol = 0;
  double atol = 0;
  bool exact = false;  ///< bit-exact comparison was required
  /// Graph outputs missing or extra in the rewritten model.
  std::vector<std::string> structural;
  std::vector<OutputComparison> outputs;
  /// Samples where the rewritten model failed although the original ran.
  std::vector<std::string> sample_errors;
  /// Samples not run because the original model rejects their inputs, each with the
  /// original's error ("random sample 0 (H=1, W=1): the original rejects these inputs: ...").
  std::vector<std::string> skipped_samples;
  std::optional<Divergence> divergence;
  std::vector<LocalCheck> local;
  /// Largest errors over all outputs and samples.
  double max_abs_error = 0;
  int64_t max_ulp = 0;
  /// The report exactly as `onnx-bcast verify` prints it, and as `verify --json` writes it.
  std::string text;
  std::string json;
};

/// Runs `original` and `rewritten` on the same inputs and compares every output. A mismatch is
/// a successful verification with `match == false`; the status is an error only when a model
/// cannot be read or the original itself fails on every input (InvalidArgument).
ONNX_BCAST_API absl::StatusOr<VerifyResult> Verify(const onnx::ModelProto& original,
                                                   const onnx::ModelProto& rewritten,
                                                   const VerifyOptions& options = {});
ONNX_BCAST_API absl::StatusOr<VerifyResult> Verify(const std::string& original_path,
                                                   const std::string& rewritten_path,
                                                   const VerifyOptions& options = {});

}  // namespace onnx_bcast

#endif  // ONNX_BCAST_API_INCLUDE_ONNX_BCAST_ONNX_BCAST_H_
