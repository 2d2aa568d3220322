// Function expansion: the bodies libonnx defines for ops as functions (NegativeLogLikelihoodLoss,
// Celu, Range...) and the inlining of a function call (model-local or schema) into plain nodes.
#ifndef ONNX_BCAST_PROTO_FUNCTION_EXPAND_H_
#define ONNX_BCAST_PROTO_FUNCTION_EXPAND_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/onnx.h"

namespace onnx_bcast::proto {

/// A function body for one call: the body and the call with the schema's attribute defaults
/// filled in (so that ref_attr_name references bind even when the call omits them).
struct FunctionBody {
  onnx::FunctionProto body;
  onnx::NodeProto call;
};

/// The body libonnx's schema of `call.op_type()` in `domain` at `opset` defines, built for this
/// call; context-dependent bodies see `input_types` (a default TypeProto means unknown).
/// NotFound when the op has no schema or no function at that opset; libonnx errors become
/// InvalidArgument.
absl::StatusOr<FunctionBody> SchemaFunctionBody(const onnx::NodeProto& call,
                                                const std::string& domain, int64_t opset,
                                                const std::vector<onnx::TypeProto>& input_types);

/// The body's nodes with the call bound: formal inputs and outputs become the call's actual
/// names (omitted ones: "" for inputs, a fresh name for outputs), every other value defined in
/// the body is renamed "<prefix><name>", attributes with ref_attr_name take the call's value
/// (and are dropped when the call has none), and the same renaming applies inside subgraphs.
std::vector<onnx::NodeProto> InlineCall(const onnx::NodeProto& call,
                                        const onnx::FunctionProto& body, const std::string& prefix);

/// Counts the model-local function calls that inlining performs, without inlining: a call costs
/// one plus what its callee's body costs, so nested calls count at every level (a body calling
/// the next level 4 times, 16 levels deep, costs 4 + 4^2 + ... + 4^16). Subgraphs of nodes count
/// like the nodes around them. Linear in the size of the model (one memoized pass over each
/// body, iterative, so a long chain of functions cannot overflow the stack). Counts saturate at
/// `cap` + 1, and a recursive function (which CheckGraphStructure refuses) counts as saturated.
/// Calls resolve by (domain, op_type), "ai.onnx" meaning "". Keeps pointers into `model`.
class FunctionInlineCounter {
 public:
  FunctionInlineCounter(const onnx::ModelProto& model, int64_t cap);

  /// Inlines performed by expanding every call in `nodes` (and their subgraphs), at most cap+1.
  int64_t Count(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes);
  /// Inlines performed by expanding one call of function (domain, name); 0 when the model does
  /// not define it (the call is an op).
  int64_t CountCall(const std::string& domain, const std::string& name);
  int64_t cap() const { return cap_; }

 private:
  friend absl::Status CheckFunctionInlines(const onnx::ModelProto& model, int64_t limit);
  int64_t Body(int f);
  void Calls(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
             std::vector<int>* out) const;
  int Find(const std::string& domain, const std::string& name) const;

  const onnx::ModelProto& model_;
  int64_t cap_;
  std::map<std::pair<std::string, std::string>, int> index_;
  std::vector<int64_t> body_;  ///< per function: inlines of its body; -1 not yet counted
};

/// ResourceExhausted when expanding the model's function calls would inline more than `limit`
/// calls: names the innermost model-local function whose own body exceeds it, else the main
/// graph. The CLI checks this before any command (CheckGraphStructure); everything that expands
/// or walks function bodies per call relies on it.
absl::Status CheckFunctionInlines(const onnx::ModelProto& model, int64_t limit);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_FUNCTION_EXPAND_H_
