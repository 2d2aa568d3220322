// The live form oracle: what an installed engine does with one node (or the few nodes a rewrite
// makes of it) at its exact bound shapes, element types and constness, as opposed to what a
// table of broadcast classes measured on other shapes says. An engine measured runs `[1,1,1,384] -
// [1,1,1,1]` (its table refuses inner-axis Sub) and computes `[1,1,32] - [1,1,1]` with one
// element instead of 32 (its table accepts it): only the exact form decides.
//
// passes/ never runs an engine: the driver hands an oracle in (PassOptions::live, the target
// check's `live`), as fold-constants receives its evaluator. An oracle is engine-neutral: it
// takes a fragment (a small model, below) and says whether the engine ran it and matched our
// executor; engines/live_probe.h makes one from an adapter of engines/registry.h.
//
// A fragment: the node with each computed operand a graph input, each constant operand an
// initializer (its data as in the model), its output the one graph output, every shape static;
// names are canonical ("in0", "in1", ..., "out"), so that equal forms make equal bytes (the
// oracle's cache key, with the engine's name and version).
#ifndef ONNX_BCAST_TARGETS_FORM_ORACLE_H_
#define ONNX_BCAST_TARGETS_FORM_ORACLE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "broadcast/shape.h"
#include "proto/model_io.h"

namespace onnx_bcast::targets {

/// What the engine did with one fragment.
struct LiveVerdict {
  bool matches = false;  ///< ran, and every output matched our executor
  /// Otherwise: "refused (load): <engine's message>", "wrong: <what differs>", "crashed: ...".
  std::string why;
};

/// An engine consulted at exact shapes. Not thread-safe (a pass calls it from one thread).
class FormOracle {
 public:
  virtual ~FormOracle() = default;
  /// "<engine> <version>", as the adapter names them (reports and messages).
  virtual std::string label() const = 0;
  /// One verdict per fragment, in order. An error for a fragment the oracle cannot decide
  /// (our executor fails on it, the children cannot be started): the caller falls back to the
  /// table for that node.
  virtual std::vector<absl::StatusOr<LiveVerdict>> Decide(
      const std::vector<const proto::Model*>& fragments) = 0;
  /// What the oracle did so far, for opt's report: forms run, answered from a cache, time.
  virtual std::string Summary() const = 0;
};

/// One operand of a node, as a fragment takes it.
struct FragmentOperand {
  std::string name;    ///< the tensor in the model (empty: an omitted optional input)
  broadcast::Shape shape;  ///< must be static
  int32_t elem = 0;    ///< onnx::TensorProto::DataType; must be known
  const onnx::TensorProto* constant = nullptr;  ///< its value when it is a constant
};

/// Node `node` of `model` as a fragment (see above), its output of type `out_elem` and shape
/// `out`; nullopt when a shape is not static, an element type is unknown, the node has more
/// than one output or a graph attribute, or a constant's data is not at hand (external data).
std::optional<proto::Model> NodeFragment(const proto::Model& model, const onnx::NodeProto& node,
                                         const std::vector<FragmentOperand>& operands,
                                         int32_t out_elem, const broadcast::Shape& out);

/// Node `node` of `model` and a `replacement` for it (each with its operands, as NodeFragment
/// takes them, at output `out` of type `out_elem`), decided by `oracle` in one call: the two
/// verdicts in that order; nullopt when either fragment cannot be made.
std::optional<std::vector<absl::StatusOr<LiveVerdict>>> DecideReplacement(
    FormOracle& oracle, const proto::Model& model, const onnx::NodeProto& node,
    const std::vector<FragmentOperand>& operands, const onnx::NodeProto& replacement,
    const std::vector<FragmentOperand>& replacement_operands, int32_t out_elem,
    const broadcast::Shape& out);

/// Whether DecideReplacement's verdicts `v` say that the node does not run and match as it is
/// and its replacement does: the only case in which a live strategy rewrites.
bool OnlyReplacementRuns(const std::vector<absl::StatusOr<LiveVerdict>>& v);

}  // namespace onnx_bcast::targets

#endif  // ONNX_BCAST_TARGETS_FORM_ORACLE_H_
