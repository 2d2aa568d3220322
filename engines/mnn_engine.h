// The MNN adapter: a model reaches MNN the way a user brings it there, through MNN's own
// converter. Load writes the ONNX bytes to a scratch directory and runs
// `MNNConvert -f ONNX --modelFile X.onnx --MNNModel X.mnn --bizCode biz` on them (a process of
// its own, started from the child the adapter lives in); the converter's refusals ("These Op
// Not Support: ...", and its shape errors such as "Don't support broadcast for binaryOp ..."
// or "Broad cast error, dim1 = 3, dim2 = 4") are the refusal, word for word, even when it goes
// on to write a model (it does: the written model would then run with shapes MNN guessed). The
// .mnn is loaded into an MNN::Interpreter with one CPU session (one thread, precision high,
// so that no fp16 path hides a broadcast error). Run resizes each session input to its feed's
// shape, copies the feeds in through host tensors in NCHW (MNN's CAFFE dimension type; MNN
// keeps the batch axis), in the element type the session input has (MNN computes integers as
// int32), and copies the outputs out in NCHW. MNN's own lines (it prints to stdout and
// stderr) are captured into the refusal.
#ifndef ONNX_BCAST_ENGINES_MNN_ENGINE_H_
#define ONNX_BCAST_ENGINES_MNN_ENGINE_H_

#include <memory>
#include <string>
#include <string_view>

#include "engines/engine.h"

namespace onnx_bcast::engines {

/// A new MNN adapter, converting with the MNNConvert found at build time (BCAST_MNN_DIR/bin),
/// or with $BCAST_MNNCONVERT when set.
std::unique_ptr<EngineAdapter> MakeMnnEngine();

/// The refusal in MNNConvert's output `log`: the lines saying it cannot convert an op or
/// compute a shape (see mnn_engine.cc for which), in order, each once, with the converter's
/// log prefixes ("[12:00:01] file.cpp:42: ") removed, joined by "; ". Empty when there is none.
std::string MnnConvertRefusal(std::string_view log);

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_MNN_ENGINE_H_
