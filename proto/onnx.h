// The single point where the ONNX protobuf classes enter the project. Other layers include this
// header (never <onnx/...> or <google/protobuf/...> directly) to name onnx::ModelProto and friends.
#ifndef ONNX_BCAST_PROTO_ONNX_H_
#define ONNX_BCAST_PROTO_ONNX_H_

#include "onnx/onnx_pb.h"  // IWYU pragma: export

#endif  // ONNX_BCAST_PROTO_ONNX_H_
