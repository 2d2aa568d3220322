// The OpenCV DNN adapter: cv::dnn::readNetFromONNX from a buffer, inputs set by name, forward
// of the asked outputs, on the OpenCV backend and CPU target with one thread (deterministic
// results). Refusals carry the cv::Exception's text.
#ifndef ONNX_BCAST_ENGINES_OPENCV_ENGINE_H_
#define ONNX_BCAST_ENGINES_OPENCV_ENGINE_H_

#include <memory>
#include <string>
#include <string_view>

#include "engines/engine.h"

namespace onnx_bcast::engines {

/// A new OpenCV DNN adapter (the installed library's version).
std::unique_ptr<EngineAdapter> MakeOpenCvEngine();

/// The cause in a cv::Exception's what(): the innermost "file:line: error: (...) ... in
/// function '...'" part (OpenCV's importer wraps a layer's error in its own), without the
/// "OpenCV(x.y.z) " banner and the source directories, so the same failure reads the same
/// across builds. The text as given (first non-empty line) when it has no such part.
std::string CvExceptionMessage(std::string_view what);

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_OPENCV_ENGINE_H_
