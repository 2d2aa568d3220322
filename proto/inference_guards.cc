// See inference_guards.h. Why our own code: libonnx 1.12's convTransposeShapeInference takes the
// number of spatial dims from X and then reads W's dims and the attribute lists at those
// indices without checking their lengths (X of rank 2 with W of rank 3 segfaults).
#include "proto/inference_guards.h"

#include <mutex>
#include <string>
#include <utility>

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"

namespace onnx_bcast::proto {
namespace {

int KnownRank(onnx::InferenceContext& ctx, size_t input) {
  if (input >= ctx.getNumInputs()) return -1;
  const onnx::TypeProto* type = ctx.getInputType(input);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) return -1;
  return type->tensor_type().shape().dim_size();
}

// A list attribute, when present, must have `want` entries.
void CheckListLength(onnx::InferenceContext& ctx, const char* name, int want, int spatial) {
  const onnx::AttributeProto* attr = ctx.getAttribute(name);
  if (attr != nullptr && attr->ints_size() != want) {
    fail_shape_inference("ConvTranspose: attribute ", name, " has ", attr->ints_size(),
                         " values, expected ", want, " for ", spatial, " spatial dims");
  }
}

// Conv-family inputs: X is [N, C, D1..Dk] with k >= 1 and W has the same rank; every per-axis
// attribute list matches k.
void CheckConvTransposeInputs(onnx::InferenceContext& ctx) {
  const int x_rank = KnownRank(ctx, 0);
  const int w_rank = KnownRank(ctx, 1);
  if (x_rank >= 0 && x_rank < 3) {
    fail_shape_inference("ConvTranspose: X has rank ", x_rank, ", expected at least 3 (N, C, D1...)");
  }
  if (x_rank >= 0 && w_rank >= 0 && x_rank != w_rank) {
    fail_shape_inference("ConvTranspose: W has rank ", w_rank, ", X has rank ", x_rank,
                         "; they must be equal");
  }
  const int rank = x_rank >= 0 ? x_rank : w_rank;
  if (rank < 0) return;  // nothing known: the original infers nothing either
  if (rank < 3) {
    fail_shape_inference("ConvTranspose: W has rank ", rank, ", expected at least 3");
  }
  const int spatial = rank - 2;
  CheckListLength(ctx, "kernel_shape", spatial, spatial);
  CheckListLength(ctx, "strides", spatial, spatial);
  CheckListLength(ctx, "dilations", spatial, spatial);
  CheckListLength(ctx, "output_padding", spatial, spatial);
  CheckListLength(ctx, "output_shape", spatial, spatial);
  CheckListLength(ctx, "pads", 2 * spatial, spatial);
}

void Guard(const char* op, int since_version, void (*check)(onnx::InferenceContext&)) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, since_version, "");
  if (schema == nullptr || schema->SinceVersion() != since_version ||
      !schema->has_type_and_shape_inference_function()) {
    return;
  }
  onnx::InferenceFunction original = schema->GetTypeAndShapeInferenceFunction();
  // The registry hands out const schemas, but they live in its own mutable map; setting the
  // inference function is the documented way to define one.
  const_cast<onnx::OpSchema*>(schema)->TypeAndShapeInferenceFunction(
      [check, original = std::move(original)](onnx::InferenceContext& ctx) {
        check(ctx);
        original(ctx);
      });
}

}  // namespace

void InstallInferenceGuards() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int version : {1, 11}) Guard("ConvTranspose", version, CheckConvTransposeInputs);
  });
}

}  // namespace onnx_bcast::proto
