// Printing models in ONNX text form (the parser lives in model_io.h: ParseModelText).
#ifndef ONNX_BCAST_PROTO_ONNX_TEXT_H_
#define ONNX_BCAST_PROTO_ONNX_TEXT_H_

#include <string>

#include "proto/onnx.h"

namespace onnx_bcast::proto {

/// The graph in libonnx's text syntax, one node per line (stable for golden tests).
std::string PrintGraph(const onnx::GraphProto& graph);

/// A model-local function in text syntax (its header, then one node per line).
std::string PrintFunction(const onnx::FunctionProto& function);

/// One node in text syntax, e.g. `C = Add (A, B)`.
std::string PrintNode(const onnx::NodeProto& node);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_ONNX_TEXT_H_
