// Guards around libonnx 1.12 shape-inference functions that index past the end of their inputs
// on malformed models (found by fuzz_check): each guarded function validates what the original
// assumes and fails inference with a message (an InferenceError, turned into a Status by the
// callers) instead of crashing. Installed into libonnx's schema registry once per process.
#ifndef ONNX_BCAST_PROTO_INFERENCE_GUARDS_H_
#define ONNX_BCAST_PROTO_INFERENCE_GUARDS_H_

namespace onnx_bcast::proto {

/// Wraps the guarded schemas' inference functions; idempotent and thread-safe. Called by every
/// entry point that runs libonnx inference (CheckModel, InferShapes, NodeInference).
void InstallInferenceGuards();

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_INFERENCE_GUARDS_H_
