// Binding symbolic dims to numbers in a model's declared shapes (`opt --dim`, `--input-shape`):
// the first step of making a model static, after which every analysis and pass sees numbers.
//
// Symbols are model-wide (docs/symbolic-shapes.md): a graph-input dim is its dim_param, or
// "<input>:<axis>" when unnamed. A binding therefore names a symbol; `--input-shape NAME=d0,...`
// is translated into bindings of the symbols of NAME's axes.
#ifndef ONNX_BCAST_PROTO_DIM_BINDING_H_
#define ONNX_BCAST_PROTO_DIM_BINDING_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/onnx.h"

namespace onnx_bcast::proto {

/// Symbol -> extent.
using SymbolBindings = std::map<std::string, int64_t>;
/// Graph input name -> the extent of each of its axes (onnxsim's --input-shape convention).
using InputShapes = std::map<std::string, std::vector<int64_t>>;

/// Adds to `bindings` the symbols of each input of `input_shapes`: per axis its dim_param, or
/// "<input>:<axis>" when the dim is unnamed. InvalidArgument (a usage error: the model is
/// fine, the request is not) naming the input when it is not a graph input of the main graph
/// (or is one backed by an initializer), its declared rank differs, a declared number differs
/// from the one given, an extent is below 1, or a symbol would be bound to two values (also
/// against a binding already in `bindings`).
absl::Status AddInputShapeBindings(const onnx::GraphProto& graph, const InputShapes& input_shapes,
                                   SymbolBindings* bindings);

/// Rewrites the declared shapes of `graph` (inputs, outputs, value_info, and the same in every
/// If/Loop/Scan body) at `bindings`: a dim_param that is a bound symbol, or an expression of
/// dims whose symbols are all bound, becomes its number; an unnamed main-graph input dim bound
/// as "<input>:<axis>" becomes its number. Returns how many dims became numbers. Never fails:
/// callers validate the bindings first (AddInputShapeBindings, and the analysis's symbols).
int64_t ApplyDimBindings(onnx::GraphProto* graph, const SymbolBindings& bindings);

/// The symbols the main graph's inputs (those without an initializer) still declare, sorted:
/// each dim_param, and "<input>:<axis>" for a dim with neither a number nor a name.
std::vector<std::string> UnboundInputSymbols(const onnx::GraphProto& graph);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_DIM_BINDING_H_
