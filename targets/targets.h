// Targets: named pipelines with a table describing what an engine runs natively, declared as
// data. Built-in targets are rows of a table; a user describes a new engine in a profile file
// (`opt --target-file FILE`) in the same vocabulary, without writing code.
//
// Profile file format (one `key = value` per line, `#` starts a comment, lists are
// comma-separated, unknown keys are errors):
//   name = myengine
//   description = my engine's BinaryOp
//   passes = upgrade-legacy-broadcast, align-ranks, legalize
//   classes = same, scalar, per-channel, inner-axis, outer-axis, general, unidirectional
//   max_rank = 4            # 0: no limit
//   batch_axis = true       # a leading axis of extent 1 or symbolic does not count
//   equal_rank = true       # operands of a broadcasting op must have equal rank
//   scalar_any_rank = true  # ...except scalar-like ones (rank 0 or all 1s)
//   runtime_shapes = false  # the engine computes no shape at run time (default true): every
//                           # Shape/Size node, shape input that is not a constant, and node
//                           # with only constant inputs is outside its form
//   initializer_types = float32, int64  # element types of constants it loads (default any)
//   unsupported_ops = Cast, Expand      # ops the engine (its converter) has no layer for:
//                                       # `opt` names them up front, as warnings
// Classes are `check`'s broadcast classes: same, scalar, per-channel, inner-axis, outer-axis,
// bidirectional, general, unidirectional, matmul-batch, legacy-axis.
//
// Per-op rules (what an engine measurement gives, engines/ and `onnx-bcast probe-engine`):
//   op.Pow.min_rank = 2                 # the op's output rank limits (0: none)
//   op.Pow.max_rank = 4
//   op.Pow.computed = same, scalar, inner-axis:aligned, general:refused
//   op.Pow.constant_b = scalar, same:refused   # "the exponent must stay a scalar"
//   op.Mul.constant_ab = same                  # two constants must have the same shape
// The part after the op names which operands (in `check`'s order: A, B; X, slope; C, (M,N);
// condition, X, Y) are constants, i.e. an initializer or a Constant node's output:
// `computed` (none), or `constant_` and their letters (a = first, b = second, ...). Each entry
// is a form class, optionally with how the engine handles it: nothing (runs), `aligned` (runs
// only when the operands have equal rank), `unaligned` (only with each constant below the
// output's rank), `first-full` (only when the first operand has the output's shape), `refused`,
// `wrong` or `crashed`. A class may carry an output rank, `inner-axis@2:first-full`: that entry
// decides nodes whose output has that rank, the plain one the others. A form class is
// check's numpy class; for Gemm's C and PRelu's slope the numpy class of the operand against
// its target (same, scalar, per-channel, ...); for MatMul `matmul-batch:<class>`. A node whose
// op has a rule for its operand kinds must have its form listed as running; forms the rule
// does not list were not measured and are not vouched for; nor is a numpy-rule node whose
// computed operand broadcasts against a constant one (the probe broadcasts the constant). The
// global keys apply as well, except `classes`: where an op has a rule for a node's operand kinds,
// the rule (measured per op) decides the class, not the global list (a summary over all ops).
//
// Exact-shape cells (issue 35; targets/shape_cells.h), measured where the engine's behaviour
// depends on the dims rather than the class:
//   op.Sub.computed.shapes = [1,N] [1,1]: refused, [1,1,N] [1,1,1]: wrong, [1,1,1,N] [1,1,1,1]
// Each entry is the operands' shapes in check's order (`[]` a scalar; a dim a number or `N`,
// any extent above 1) and, after a colon, `refused`, `wrong` or `crashed` (nothing: runs and
// matches). A node whose static shapes match an entry of its op and operand kinds is decided by
// that entry, before the class rules and the global keys; older profiles without such lines
// decide by class as before.
#ifndef ONNX_BCAST_TARGETS_TARGETS_H_
#define ONNX_BCAST_TARGETS_TARGETS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "analysis/analysis_manager.h"
#include "broadcast/shape.h"
#include "proto/model_io.h"

namespace onnx_bcast::targets {

class FormOracle;

/// How an engine handles one form of an op's broadcast (a profile's per-op rule entry).
enum class FormSupport {
  kRuns,           ///< runs and computes what ONNX says, at any operand ranks
  kRunsAligned,    ///< runs and matches only when the operands have equal rank
  kRunsUnaligned,  ///< runs and matches only when each constant operand's rank is below the
                   ///< output's
  kRunsFirstFull,  ///< runs and matches only when the first operand has the output's shape
                   ///< (an engine whose eltwise layers broadcast only their second input)
  kRefused,        ///< the engine refuses the model
  kWrong,          ///< the engine runs it and computes something else
  kCrashed,        ///< the engine aborts, crashes or hangs
};

/// "runs", "aligned", "unaligned", "first-full", "refused", "wrong", "crashed" (the profile
/// spelling; "runs" is
/// written as a bare class).
std::string_view FormSupportName(FormSupport support);

/// One exact-shape cell of a profile (`op.<Op>.<kinds>.shapes`, targets/shape_cells.h): what
/// the engine did with the op at operands of these shapes, in check's operand order. A dim is
/// a number (that extent only) or kAnyExtent ("N": any extent above 1), so that a cell measured
/// at `[1,4,6] - [1,4,1]` decides `[1,128,384] - [1,128,1]`: an engine's behaviour may follow
/// where the unit axes are, which no broadcast class says.
struct ShapeCell {
  static constexpr int64_t kAnyExtent = -1;
  std::vector<std::vector<int64_t>> operands;
  FormSupport support = FormSupport::kRuns;  ///< runs, refused, wrong or crashed

  bool operator==(const ShapeCell&) const = default;
};

/// One op's rules in a profile: `op.<Op>.min_rank`, `op.<Op>.max_rank`,
/// `op.<Op>.<operand kinds>` and `op.<Op>.<operand kinds>.shapes`.
struct OpRule {
  int64_t min_rank = 0;  ///< smallest output rank the engine runs this op at; 0: no limit
  int64_t max_rank = 0;  ///< largest output rank the engine runs this op at; 0: no limit
  /// Operand-kind pattern ("computed", "constant_b", ...) -> form class -> support.
  std::map<std::string, std::map<std::string, FormSupport>> forms;
  /// Operand-kind pattern -> exact-shape cells, in file order (the first that matches a node
  /// decides it, before its class).
  std::map<std::string, std::vector<ShapeCell>> shape_cells;

  bool operator==(const OpRule&) const = default;
};

/// What an engine runs natively, and the pipeline that gets a model there.
struct TargetProfile {
  std::string name;
  std::string description;
  std::vector<std::string> passes;          ///< registry names, in order
  std::vector<std::string> native_classes;  ///< broadcast classes the engine runs natively
  int64_t max_rank = 0;                     ///< 0: no limit
  bool batch_axis = false;       ///< a leading axis of extent 1 or symbolic is not counted
  bool equal_rank = false;       ///< broadcast operands must have equal rank
  bool scalar_any_rank = false;  ///< scalar-like operands are exempt from equal_rank
  /// False: the engine takes shapes only as constants (a converter that binds every shape):
  /// rewrites never insert a Shape-derived Expand, and the target check names every node that
  /// computes a shape at run time (targets/runtime_shapes.h) with the dims to bind.
  bool runtime_shapes = true;
  /// Element types the engine loads as initializers or Constant nodes ("float32", "int64",
  /// ...; empty: any). fold-constants creates no initializer of another type, and the target
  /// check names every one left (an engine may refuse a bool tensor at load).
  std::vector<std::string> initializer_types;
  /// Ops the engine has no layer for, as measured (a probe cell refused with the converter's
  /// "<op> not supported yet"). Not broadcast forms: `opt` lists a model's nodes of these ops
  /// as warnings (and "unsupported_ops" in --report) and still exits 0.
  std::vector<std::string> unsupported_ops;

  /// Per-op rules by op type (empty: the global keys alone decide).
  std::map<std::string, OpRule> op_rules;

  /// True when `broadcast_class` is listed (a "matmul-batch:<class>" matches "matmul-batch").
  bool Runs(std::string_view broadcast_class) const;
  bool Runs(broadcast::BroadcastClass broadcast_class) const;
  /// The rank that counts toward max_rank.
  int64_t EffectiveRank(const broadcast::Shape& shape) const;
  /// True when `shape` exceeds max_rank.
  bool TooHighRank(const broadcast::Shape& shape) const;
  /// True when an initializer of ONNX element type `data_type` is one the engine loads.
  bool InitializerTypeAllowed(int32_t data_type) const;
};

/// The profile's name of ONNX element type `data_type` ("float32", "int64", "bool", ...;
/// "type <n>" for one it does not name).
std::string ElementTypeName(int32_t data_type);

/// The built-in targets: explicit, none and canonical, and one for each measured profile under
/// engines/profiles/ (named after its file, `<engine>-20260722.profile` -> `<engine>`), which
/// the build embeds; listed in the order of engines/profiles/builtin_order.txt.
absl::Span<const TargetProfile> BuiltinTargets();

/// A measured profile file (`<engine>-<version>.profile`) as the built-in target it becomes:
/// its rules, named after its engine, the file's name up to its first '-' or '.'
/// (`<engine>-20260722.profile` -> `<engine>`), the name the engine's adapter has in
/// engines/registry.cc. What BuiltinTargets() makes of every file of engines/profiles/.
absl::StatusOr<TargetProfile> ProfileTarget(std::string_view file_name, std::string_view text);

/// The built-in target named `name`, or null.
const TargetProfile* FindTarget(std::string_view name);

/// Says whether a pass name is registered. targets/ sits below passes/, which owns the registry,
/// so the caller hands the check in (passes::IsRegisteredPass); null accepts any name.
using PassNameCheck = bool (*)(std::string_view name);

/// Parses a profile file's text. Errors (InvalidArgument) name `label`, the line and the key;
/// with `is_pass`, a `passes` entry it refuses is an error too ("unknown pass").
absl::StatusOr<TargetProfile> ParseTargetProfile(std::string_view text, const std::string& label,
                                                 PassNameCheck is_pass = nullptr);

/// Reads and parses a profile file.
absl::StatusOr<TargetProfile> LoadTargetProfile(const std::string& path,
                                                PassNameCheck is_pass = nullptr);

/// The profile in file form (round-trips through ParseTargetProfile).
std::string FormatTargetProfile(const TargetProfile& profile);

/// The operand-kind pattern of `v` for OpRule::forms: "computed" when none of its operands (in
/// v.input_names' order) is a constant per `is_constant`, else "constant_" and the letters of
/// the constant ones ("constant_b": the second). Gemm's (M,N) is computed.
std::string OperandKindPattern(const analysis::NodeVerdict& v,
                               const std::function<bool(const std::string&)>& is_constant);

/// The form class of `v` for OpRule::forms: the numpy class for numpy ops, the class of the
/// operand against its target for PRelu's slope and Gemm's C, "matmul-batch:<class>" for
/// MatMul, the input's class against the output for Expand (`general` along several axes);
/// empty when the node has no class (an error, a legacy form).
std::string FormClass(const analysis::NodeVerdict& v);

/// True when the operands whose ranks a broadcast aligns have equal rank (MatMul: the two
/// operands when both have rank >= 2; a unidirectional operand and its target).
bool OperandsAligned(const analysis::NodeVerdict& v);

/// True when `v`'s first operand has the output's shape: what `first-full` asks for.
bool FirstOperandFull(const analysis::NodeVerdict& v);

/// True when `v` has a constant operand (per `is_constant`) and every constant operand has a
/// lower rank than the node's output (for Gemm, than (M,N)): what `unaligned` asks for.
bool ConstantsBelowOutputRank(const analysis::NodeVerdict& v,
                              const std::function<bool(const std::string&)>& is_constant);

/// One broadcasting node that is not provably in a target's form.
struct TargetViolation {
  std::string graph;  ///< "main", or the path of an If/Loop/Scan body or function call site
  std::string node;   ///< node name, or "<op>#<index>"
  std::string op;
  std::string shapes;  ///< the operands' shapes, e.g. "[1,20,120] and [120]"
  std::string why;     ///< the rule of the table it breaks, or why it cannot be proven
  /// True when the node may conform but the analysis cannot show it (unknown rank or dims).
  bool cannot_prove = false;
  /// The part of `why` that says what makes the node fit ("bind N, H with --dim"), filled by
  /// the driver for reports; empty when `why` says none.
  std::string hint;

  /// "<graph>: <op> '<node>': <shapes>: <why>".
  std::string ToString() const;
};

/// Why one broadcasting node is not in a profile's form (FormDecision::fits false).
struct FormDecision {
  bool fits = true;
  std::string why;            ///< the rule broken, as TargetViolation::why
  bool cannot_prove = false;  ///< see TargetViolation::cannot_prove
  /// >= 0: the input whose unknown rank stops the decision (callers name its producer).
  int unknown_rank_input = -1;
  /// The exact-shape cell that decided, "op.<Op>.<kinds>.shapes: <shapes>"; empty when the
  /// class rules (or the global keys) did (reports say which).
  std::string shape_cell;
};

/// The one profile lookup: whether node `v` (its shapes and class as DecideNode gives them,
/// its operands' kinds per `is_constant`) is in `profile`'s form. CheckTarget decides every
/// node with it, and the rewrites that choose a form for an engine
/// (legalize-measured) decide each candidate with it, so the two cannot disagree. An Expand is
/// decided by the profile's op.Expand rule, its form class being its input's class against its
/// output, `general` when it broadcasts along more than one axis (a profile without one lets
/// every Expand fit). The texts are built only for a node
/// that does not fit.
FormDecision DecideForm(const analysis::NodeVerdict& v, const TargetProfile& profile,
                        const std::function<bool(const std::string&)>& is_constant);

/// DecideForm of an Expand from `input` (constant or computed) to `output` with a constant
/// target shape: whether a rewrite may insert it.
FormDecision DecideExpandForm(const broadcast::Shape& input, const broadcast::Shape& output,
                              bool input_constant, const TargetProfile& profile);

/// Every broadcasting node of every graph of `model` (main graph, If/Loop/Scan bodies, and
/// model-local function bodies per call site) that is not provably in `profile`'s form: proven
/// broadcast errors, classes the engine does not run, unequal or too-high ranks, and nodes
/// whose ranks or dims are not known well enough to prove the form where the table depends on
/// them ("cannot prove: rank of B unknown, produced by ..."), and with `runtime_shapes =
/// false` every node that computes a shape at run time. Empty when the model provably
/// conforms. Expand nodes are checked where the profile has an op.Expand rule.
/// `original_index` (see OriginalNodeIndex): labels of unnamed main-graph nodes use their index
/// in the model a pipeline started from, as the passes' logs do. `tables`: the pipeline's kept
/// shape tables of the main graph (AnalysisManager::held); when the model has no bodies or
/// functions the nodes are decided from them (DecideNode) instead of a new analysis.
/// `live` (form_oracle.h): on a model without bodies or functions, every broadcasting node
/// (other than Expand) whose shapes and types are static is decided by running it on the engine
/// at those shapes, as legalize-measured decides it, instead of by the table; the table decides
/// the others and any the oracle cannot.
absl::StatusOr<std::vector<TargetViolation>> CheckTarget(
    const proto::Model& model, const TargetProfile& profile,
    const std::unordered_map<std::string, int>* original_index = nullptr,
    const analysis::ShapeTables* tables = nullptr, FormOracle* live = nullptr);

/// CheckTarget as one message per node (TargetViolation::ToString).
absl::StatusOr<std::vector<std::string>> FindTargetViolations(
    const proto::Model& model, const TargetProfile& profile,
    const std::unordered_map<std::string, int>* original_index = nullptr,
    const analysis::ShapeTables* tables = nullptr, FormOracle* live = nullptr);

/// First output name -> index of every unnamed-node-bearing main graph's nodes (empty when every
/// node has a name): taken before a pipeline runs, for CheckTarget's labels.
std::unordered_map<std::string, int> OriginalNodeIndex(const onnx::GraphProto& graph);

}  // namespace onnx_bcast::targets

#endif  // ONNX_BCAST_TARGETS_TARGETS_H_
