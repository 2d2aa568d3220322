// The ncnn adapter: a model reaches ncnn the way a user brings it there, through ncnn's own
// converter. Load writes the ONNX bytes to a scratch directory and runs onnx2ncnn on them (a
// process of its own, started from the child the adapter lives in); the converter's
// "X not supported yet!" and "Unsupported ..." lines are the refusal, word for word. The
// .param/.bin it writes are loaded into an ncnn::Net (CPU, one thread, fp32 storage and
// arithmetic). Run maps each tensor to an ncnn::Mat as ncnn's tools do: a leading batch axis
// of 1 is dropped (ncnn has no batch axis), any other batch is refused, and the remaining
// axes, at most 4, become (c, d, h, w) innermost last. Integer inputs are fed as int32 (what
// ncnn's Embed reads), everything else as float32; outputs come back as float32 without the
// batch axis. ncnn's own error lines (it logs to stderr) are captured into the refusal.
#ifndef ONNX_BCAST_ENGINES_NCNN_ENGINE_H_
#define ONNX_BCAST_ENGINES_NCNN_ENGINE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engines/engine.h"

namespace onnx_bcast::engines {

/// A new ncnn adapter, converting with the onnx2ncnn found at build time (BCAST_NCNN_DIR/bin),
/// or with $BCAST_ONNX2NCNN when set.
std::unique_ptr<EngineAdapter> MakeNcnnEngine();

/// The refusal in onnx2ncnn's output `log`: its "... not supported yet!" and "Unsupported ..."
/// lines, in order, each once, joined by "; ". Empty when the converter reported none.
std::string Onnx2NcnnRefusal(std::string_view log);

/// The ncnn::Mat dims (outermost first, at most 4) of a tensor of `shape`: the leading axis
/// dropped when it is a batch of 1 and the rank is at least 2. InvalidArgument for another
/// batch (rank >= 2 with a leading extent other than 1) or more than 4 axes left.
absl::StatusOr<std::vector<int64_t>> NcnnDims(const std::string& name,
                                              const std::vector<int64_t>& shape);

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_NCNN_ENGINE_H_
