// The single point where the ONNX protobuf classes enter the project. Other layers include this
// header (never <onnx/...> or <google/protobuf/...> directly) to name onnx::ModelProto and friends.
#pragma once

#include "onnx/onnx_pb.h"  // IWYU pragma: export
