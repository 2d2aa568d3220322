// The operand rewrites that make a broadcast explicit, shared by align-ranks,
// materialize-broadcast and legalize-measured's strategies: give an operand leading 1s up to a
// rank, or make it exactly the broadcast's output shape (a constant folded within the fold limit,
// else an Expand).
//
// Requires: a RewriteContext whose shapes are current (every pass's context is).
// Guarantees: each rewrite is logged on the context (Record) with the shapes before and after;
// where one does not apply, the context's debug log says why and the graph is unchanged.
// Copies of a shared constant are made once per graph and read by every use that wants the same
// one (RewriteContext::constant_copies).
#ifndef ONNX_BCAST_PASSES_OPERAND_REWRITES_H_
#define ONNX_BCAST_PASSES_OPERAND_REWRITES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "broadcast/shape.h"
#include "passes/rewrite_context.h"

namespace onnx_bcast::passes {

/// The rank input `slot` of node `id` has once its broadcast is explicit: the largest input
/// rank of a numpy-form op, X's rank for PRelu's slope, 2 for Gemm's C, the larger rank for
/// MatMul operands of rank >= 2; nullopt for other operands, legacy forms and unknown ranks.
/// The one rule align-ranks, the legalize passes and constant folding follow.
std::optional<int64_t> OperandRank(RewriteContext& ctx, int id, int slot);

/// The rank every use of `name` wants (OperandRank), or nullopt when uses disagree or a use
/// is not a broadcast operand.
std::optional<int64_t> CommonWantedRank(RewriteContext& ctx, const std::string& name);

/// Gives input `slot` of node `id` leading 1s up to `rank`: folded into a constant (in
/// place when every use of it wants the same rank, else a copy up to the fold limit), or
/// an inserted Unsqueeze (rank-only, correct for symbolic and zero dims). No-op when the
/// rank is already `rank` or unknown.
void AlignOperand(RewriteContext& ctx, int id, int slot, int64_t rank);

/// True when ExpandOperand would broadcast constant `name` into a new constant of shape
/// `out` (static, within the fold limit) rather than insert an Expand.
bool FoldsToConstant(RewriteContext& ctx, const std::string& name, const broadcast::Shape& out);

/// Makes input `slot` of node `id` have exactly shape `out` (the node's broadcast output):
/// a constant is broadcast into a new initializer when that costs at most the fold limit;
/// otherwise `Expand` to a constant shape (static `out`) or to `Shape` of the other
/// operands (symbolic). False (with a debug reason) when it does not apply; Unimplemented
/// when Expand needs an opset the model cannot be raised to.
/// `operands` (default: the node's current inputs) are the tensors whose Shape the
/// symbolic form expands against.
absl::StatusOr<bool> ExpandOperand(RewriteContext& ctx, int id, int slot,
                                   const broadcast::Shape& out,
                                   const std::vector<std::string>* operands = nullptr);

/// Points input `slot` of node `id` at `Expand(input, shape_tensor)`, whose shape is `out`
/// (the caller built `shape_tensor` to hold exactly `out`'s extents at run time).
absl::Status ExpandOperandTo(RewriteContext& ctx, int id, int slot, const std::string& shape_tensor,
                             const broadcast::Shape& out);

/// Makes Gemm `id`'s C have exactly shape (M,N) (from A, B, transA, transB): a constant
/// Expand target when static, else one read at run time (see the definition). A no-op with a
/// debug reason when A or B is not known to be 2-D or C does not provably broadcast.
absl::Status ExpandGemmC(RewriteContext& ctx, int id);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_OPERAND_REWRITES_H_
