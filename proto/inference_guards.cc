// See inference_guards.h. Why our own code: libonnx 1.12's inference functions trust what the
// checker would have verified (found by fuzz_check): convTransposeShapeInference takes the number
// of spatial dims from X and reads W's dims and the attribute lists at those indices unchecked
// (X of rank 2 with W of rank 3 segfaults), Conv does the same with X of rank 3 and W of rank
// 4; conv/pool inference divides by a zero stride; LayerNormalization indexes a shapeless X;
// Gemm reads dim 1 of a rank-1 A or B; Scan-9 dereferences a missing num_scan_inputs;
// DepthToSpace/SpaceToDepth square a blocksize of 2^32 to 0 and divide by it, SplitToSequence
// divides by a scalar split of 0 (SIGFPE, issue 14). Every
// schema gets the arity/attribute check, a few ops a specific one.
#include "proto/inference_guards.h"

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

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
void CheckListLength(onnx::InferenceContext& ctx, const char* op, const char* name, int want,
                     int spatial) {
  const onnx::AttributeProto* attr = ctx.getAttribute(name);
  if (attr != nullptr && attr->ints_size() != want) {
    fail_shape_inference(op, ": attribute ", name, " has ", attr->ints_size(),
                         " values, expected ", want, " for ", spatial, " spatial dims");
  }
}

// Conv/pool inference (convPoolShapeInference) divides by strides and multiplies by dilations
// and kernel extents without checking them: a zero stride is a SIGFPE.
void CheckPositiveLists(onnx::InferenceContext& ctx) {
  for (const char* name : {"strides", "dilations", "kernel_shape"}) {
    const onnx::AttributeProto* attr = ctx.getAttribute(name);
    if (attr == nullptr) continue;
    for (int64_t v : attr->ints()) {
      if (v < 1) fail_shape_inference("attribute ", name, " has value ", v, ", expected >= 1");
    }
  }
}

// Conv-family and pooling inputs: X is [N, C, D1..Dk] with k >= 1, W (input `w_input`, -1 for
// pools) has the same rank, every per-axis attribute list has k entries (pads 2k) and the
// strides, dilations and kernel extents are positive. libonnx 1.12 takes k from W or
// kernel_shape and then reads X's dims and the lists at those indices unchecked.
void CheckConvLike(onnx::InferenceContext& ctx, const char* op, int w_input, bool transpose) {
  CheckPositiveLists(ctx);
  const int x_rank = KnownRank(ctx, 0);
  const int w_rank = w_input >= 0 ? KnownRank(ctx, static_cast<size_t>(w_input)) : -1;
  if (x_rank >= 0 && x_rank < 3) {
    fail_shape_inference(op, ": X has rank ", x_rank, ", expected at least 3 (N, C, D1...)");
  }
  if (x_rank >= 0 && w_rank >= 0 && x_rank != w_rank) {
    fail_shape_inference(op, ": W has rank ", w_rank, ", X has rank ", x_rank,
                         "; they must be equal");
  }
  const int rank = x_rank >= 0 ? x_rank : w_rank;
  if (rank < 0) return;  // nothing known: the original infers nothing either
  if (rank < 3) fail_shape_inference(op, ": W has rank ", rank, ", expected at least 3");
  const int spatial = rank - 2;
  CheckListLength(ctx, op, "kernel_shape", spatial, spatial);
  CheckListLength(ctx, op, "strides", spatial, spatial);
  CheckListLength(ctx, op, "dilations", spatial, spatial);
  CheckListLength(ctx, op, "pads", 2 * spatial, spatial);
  if (transpose) {
    CheckListLength(ctx, op, "output_padding", spatial, spatial);
    CheckListLength(ctx, op, "output_shape", spatial, spatial);
  }
}

void CheckConv(onnx::InferenceContext& ctx) { CheckConvLike(ctx, "Conv", 1, false); }
void CheckConvInteger(onnx::InferenceContext& ctx) {
  CheckConvLike(ctx, "ConvInteger", 1, false);
}
void CheckQLinearConv(onnx::InferenceContext& ctx) {
  CheckConvLike(ctx, "QLinearConv", 3, false);
}
void CheckConvTranspose(onnx::InferenceContext& ctx) {
  CheckConvLike(ctx, "ConvTranspose", 1, true);
}
void CheckPool(onnx::InferenceContext& ctx) { CheckConvLike(ctx, "pooling", -1, false); }

// What onnx::checker would refuse and inference functions take for granted (Scan-9 dereferences
// its required num_scan_inputs unchecked): arity within the schema's bounds, every required
// attribute present, and a present attribute of the declared type. libonnx's own
// OpSchema::Verify needs the NodeProto, which an InferenceContext does not expose.
void CheckAgainstSchema(const onnx::OpSchema& schema, onnx::InferenceContext& ctx) {
  const int inputs = static_cast<int>(ctx.getNumInputs());
  const int outputs = static_cast<int>(ctx.getNumOutputs());
  if (inputs < schema.min_input() || inputs > schema.max_input()) {
    fail_shape_inference(schema.Name(), ": ", inputs, " inputs, the schema allows ",
                         schema.min_input(), " to ", schema.max_input());
  }
  if (outputs < schema.min_output() || outputs > schema.max_output()) {
    fail_shape_inference(schema.Name(), ": ", outputs, " outputs, the schema allows ",
                         schema.min_output(), " to ", schema.max_output());
  }
  // No default-domain op takes a sparse tensor input, and the shape helpers read its dims as a
  // dense tensor's (found by fuzz_opt: a Gemm on a sparse graph input segfaulted).
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    const onnx::TypeProto* type = ctx.getInputType(i);
    if (type != nullptr && type->value_case() == onnx::TypeProto::kSparseTensorType) {
      fail_shape_inference(schema.Name(), ": input ", i, " is a sparse tensor");
    }
  }
  for (const auto& [name, attr] : schema.attributes()) {
    const onnx::AttributeProto* given = ctx.getAttribute(name);
    if (given == nullptr) {
      if (attr.required) {
        fail_shape_inference(schema.Name(), ": required attribute '", name, "' is missing");
      }
      continue;
    }
    if (given->type() != onnx::AttributeProto::UNDEFINED && given->type() != attr.type) {
      fail_shape_inference(schema.Name(), ": attribute '", name, "' has type ",
                           static_cast<int>(given->type()), ", the schema declares ",
                           static_cast<int>(attr.type));
    }
  }
}

// Gemm (every version) reads dims 0 and 1 of A and B without checking their rank.
void CheckGemmInputs(onnx::InferenceContext& ctx) {
  for (size_t i : {0, 1}) {
    const int rank = KnownRank(ctx, i);
    if (rank >= 0 && rank != 2) {
      fail_shape_inference("Gemm: input ", i == 0 ? "A" : "B", " has rank ", rank,
                           ", expected 2");
    }
  }
}

// LayerNormalization-17 shapes Mean and InvStdDev by indexing X's dims at `axis` unchecked: X
// without a shape (or an axis outside its rank) segfaults.
void CheckLayerNormalization(onnx::InferenceContext& ctx) {
  const int rank = KnownRank(ctx, 0);
  if (rank < 0) {
    if (ctx.getNumOutputs() > 1) {
      fail_shape_inference("LayerNormalization: X has no shape; Mean and InvStdDev need its rank");
    }
    return;
  }
  const onnx::AttributeProto* attr = ctx.getAttribute("axis");
  const int64_t axis = attr != nullptr ? attr->i() : -1;
  if (axis < -rank || axis >= rank) {
    fail_shape_inference("LayerNormalization: axis ", axis, " is outside X's rank ", rank);
  }
}

// A known dim of input `input` at `axis`, or -1.
int64_t KnownDim(onnx::InferenceContext& ctx, size_t input, int axis) {
  if (KnownRank(ctx, input) <= axis) return -1;
  const auto& dim = ctx.getInputType(input)->tensor_type().shape().dim(axis);
  return dim.has_dim_value() ? dim.dim_value() : -1;
}

// DepthToSpace/SpaceToDepth inference divides C by blocksize * blocksize and multiplies the
// spatial dims by blocksize: a blocksize of 2^32 squares to 0 (SIGFPE), larger products
// overflow. The blocksize must be positive, its square and every product must fit int64.
void CheckBlocksize(onnx::InferenceContext& ctx, const char* op, bool to_space) {
  const onnx::AttributeProto* attr = ctx.getAttribute("blocksize");
  if (attr == nullptr) return;  // required: the schema check reports it
  const int64_t b = attr->i();
  int64_t square = 0;
  if (b < 1 || __builtin_mul_overflow(b, b, &square)) {
    fail_shape_inference(op, ": blocksize ", b, " must be positive and its square fit int64");
  }
  for (int axis : {1, 2, 3}) {
    const int64_t dim = KnownDim(ctx, 0, axis);
    int64_t product = 0;
    const int64_t factor = axis == 1 ? square : b;
    // DepthToSpace multiplies H and W, SpaceToDepth multiplies C.
    if (dim > 0 && (axis == 1) != to_space && __builtin_mul_overflow(dim, factor, &product)) {
      fail_shape_inference(op, ": dim ", axis, " (", dim, ") times blocksize ", b,
                           " overflows int64");
    }
  }
}
void CheckDepthToSpace(onnx::InferenceContext& ctx) {
  CheckBlocksize(ctx, "DepthToSpace", true);
}
void CheckSpaceToDepth(onnx::InferenceContext& ctx) {
  CheckBlocksize(ctx, "SpaceToDepth", false);
}

// SplitToSequence inference divides the split axis by a scalar `split` (0 is a SIGFPE); the
// operator requires positive lengths.
void CheckSplitToSequence(onnx::InferenceContext& ctx) {
  if (ctx.getNumInputs() < 2) return;
  const onnx::TensorProto* split = ctx.getInputData(1);
  if (split == nullptr) return;
  std::vector<int64_t> values;
  if (split->data_type() == onnx::TensorProto::INT64) {
    values.assign(split->int64_data().begin(), split->int64_data().end());
    for (size_t i = 0; i + 8 <= split->raw_data().size(); i += 8) {
      int64_t v;
      std::memcpy(&v, split->raw_data().data() + i, 8);
      values.push_back(v);
    }
  } else if (split->data_type() == onnx::TensorProto::INT32) {
    values.assign(split->int32_data().begin(), split->int32_data().end());
    for (size_t i = 0; i + 4 <= split->raw_data().size(); i += 4) {
      int32_t v;
      std::memcpy(&v, split->raw_data().data() + i, 4);
      values.push_back(v);
    }
  }
  for (int64_t v : values) {
    if (v < 1) fail_shape_inference("SplitToSequence: split has length ", v, ", expected >= 1");
  }
}

using OpCheck = void (*)(onnx::InferenceContext&);

// Op-specific checks, run after the schema check (any version of the op).
OpCheck SpecificCheck(const std::string& op, const std::string& domain) {
  if (!domain.empty() && domain != "ai.onnx") return nullptr;
  if (op == "ConvTranspose") return CheckConvTranspose;
  if (op == "Conv") return CheckConv;
  if (op == "ConvInteger") return CheckConvInteger;
  if (op == "QLinearConv") return CheckQLinearConv;
  if (op == "AveragePool" || op == "MaxPool" || op == "LpPool" || op == "MaxUnpool") {
    return CheckPool;
  }
  if (op == "Gemm") return CheckGemmInputs;
  if (op == "LayerNormalization") return CheckLayerNormalization;
  if (op == "DepthToSpace") return CheckDepthToSpace;
  if (op == "SpaceToDepth") return CheckSpaceToDepth;
  if (op == "SplitToSequence") return CheckSplitToSequence;
  return nullptr;
}

void Guard(const onnx::OpSchema& copy) {
  // The history lists copies; the registry's own schema is the one inference calls.
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(copy.Name(), copy.SinceVersion(), copy.domain());
  if (schema == nullptr || schema->SinceVersion() != copy.SinceVersion() ||
      !schema->has_type_and_shape_inference_function()) {
    return;
  }
  onnx::InferenceFunction original = schema->GetTypeAndShapeInferenceFunction();
  const OpCheck specific = SpecificCheck(schema->Name(), schema->domain());
  // The registry hands out const schemas, but they live in its own mutable map; setting the
  // inference function is the documented way to define one.
  const_cast<onnx::OpSchema*>(schema)->TypeAndShapeInferenceFunction(
      [schema, specific, original = std::move(original)](onnx::InferenceContext& ctx) {
        CheckAgainstSchema(*schema, ctx);
        if (specific != nullptr) specific(ctx);
        original(ctx);
      });
}

}  // namespace

void InstallInferenceGuards() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const onnx::OpSchema& schema : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
      Guard(schema);
    }
  });
}

}  // namespace onnx_bcast::proto
