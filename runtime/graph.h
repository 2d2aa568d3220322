// The executor's own graph form: nodes with decoded attributes and constant tensors, loaded
// once from an ONNX model (runtime/model_loader.h) so that kernels never see protobuf.
#ifndef ONNX_BCAST_RUNTIME_GRAPH_H_
#define ONNX_BCAST_RUNTIME_GRAPH_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/tensor.h"
#include "runtime/value.h"

namespace onnx_bcast::runtime {

struct Graph;

/// One attribute, decoded. Tensors are shared so a graph can be copied cheaply.
struct Attribute {
  enum class Type { kUndefined, kFloat, kInt, kString, kTensor, kGraph, kFloats, kInts, kStrings,
                    kTensors, kGraphs, kTypeProto };
  Type type = Type::kUndefined;
  float f = 0;
  int64_t i = 0;
  std::string s;  ///< STRING (bytes)
  std::shared_ptr<const Tensor> t;
  std::shared_ptr<const Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<std::shared_ptr<const Tensor>> tensors;
  std::vector<std::shared_ptr<const Graph>> graphs;
  /// For TYPE_PROTO attributes (e.g. SequenceEmpty's dtype): the element type, if a tensor.
  DType elem_type = DType::kUndefined;
};

/// One node. `inputs`/`outputs` hold value names; "" marks an omitted optional input/output.
struct Node {
  std::string name;  ///< as in the model, or "<op>#<index>" when unnamed
  std::string op_type;
  std::string domain;  ///< "" for the default ONNX domain
  int64_t opset = 0;   ///< the version of `domain` imported by the model (or function)
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, Attribute> attrs;

  const Attribute* Find(const std::string& attr) const;
  bool Has(const std::string& attr) const { return Find(attr) != nullptr; }
  int64_t GetInt(const std::string& attr, int64_t fallback) const;
  float GetFloat(const std::string& attr, float fallback) const;
  std::string GetString(const std::string& attr, const std::string& fallback) const;
  /// INTS attribute, or `fallback` when absent.
  std::vector<int64_t> GetInts(const std::string& attr, std::vector<int64_t> fallback = {}) const;
  std::vector<float> GetFloats(const std::string& attr, std::vector<float> fallback = {}) const;
  std::vector<std::string> GetStrings(const std::string& attr,
                                      std::vector<std::string> fallback = {}) const;
  /// "Add 'name'" for messages.
  std::string Label() const;
};

/// A graph (the main graph or a subgraph body). Nodes are in topological order. Names used
/// but not defined here (outer-scope values of subgraphs) are resolved by the executor.
struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::vector<std::string> inputs;   ///< in order; initializers excluded unless also inputs
  std::vector<std::string> outputs;  ///< in order
  /// Declared element types and shapes of the inputs (for random inputs and checks); dims are
  /// -1 when symbolic or unknown, and `input_symbols` holds the symbol names ("" if none).
  std::vector<DType> input_types;
  std::vector<std::vector<int64_t>> input_shapes;
  std::vector<std::vector<std::string>> input_symbols;
  std::vector<bool> input_shape_known;  ///< false when the input has no shape at all
  std::map<std::string, std::shared_ptr<const Tensor>> initializers;
};

/// A loaded model ready to run.
struct Model {
  std::shared_ptr<const Graph> main;
  std::map<std::string, int64_t> opsets;  ///< domain ("" = default) -> version
  std::string path;
};

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_GRAPH_H_
