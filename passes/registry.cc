// The explicit pass table. Add a row here for each pass; nothing registers itself.
#include "passes/registry.h"

#include "passes/align_ranks.h"
#include "passes/eliminate_redundant_broadcast.h"
#include "passes/fold_constants.h"
#include "passes/legalize_measured.h"
#include "passes/materialize_broadcast.h"
#include "passes/upgrade_legacy_broadcast.h"

namespace onnx_bcast::passes {

absl::Span<const PassInfo> AllPasses() {
  static const PassInfo kPasses[] = {
      {kUpgradeLegacyBroadcastPassName,
       "opset<7 broadcast=1/axis ops to numpy semantics (rank-only Unsqueeze of B), opset 7",
       CreateUpgradeLegacyBroadcastPass, /*needs_target=*/false, /*preserves_shapes=*/true},
      {kFoldConstantsPassName,
       "replace every value computable without the graph's inputs by an initializer (Shape of "
       "static dims, shape arithmetic, constant-input nodes, If on a constant; constant-input "
       "nodes inside bodies); drop Identity, inference Dropout and dead nodes",
       CreateFoldConstantsPass, /*needs_target=*/false, /*preserves_shapes=*/false},
      {kAlignRanksPassName,
       "give lower-rank broadcast operands leading 1s (folded into constants, else Unsqueeze)",
       CreateAlignRanksPass, /*needs_target=*/false, /*preserves_shapes=*/true},
      {kMaterializeBroadcastPassName,
       "Expand every operand that needs a broadcast to its op's output shape",
       CreateMaterializeBroadcastPass, /*needs_target=*/false, /*preserves_shapes=*/true},
      {kEliminateRedundantBroadcastPassName,
       "remove Expand/Unsqueeze/Reshape/Tile that only broadcast what consumers broadcast anyway",
       CreateEliminateRedundantBroadcastPass, /*needs_target=*/false, /*preserves_shapes=*/true},
      {kLegalizeMeasuredPassName,
       "move every broadcasting node the target's engine does not run into a form it runs "
       "(swap, align, fold, expand or Mul-by-ones an operand, fold constants, compute on a "
       "reshaped or rank-raised view, decompose LayerNormalization), decided live on the "
       "installed engine at exact shapes, else by the measured table; part of every engine target",
       CreateLegalizeMeasuredPass, /*needs_target=*/true, /*preserves_shapes=*/true},
      // The one fit decider is DecideForm, through legalize-measured: `legalize`, which profile
      // files name, is the same pass under its older name.
      {"legalize", "legalize-measured under the name profile files use (--target-file)",
       CreateLegalizeMeasuredPass, /*needs_target=*/true, /*preserves_shapes=*/true},
  };
  return absl::Span<const PassInfo>(kPasses);
}

const PassInfo* FindPass(std::string_view name) {
  for (const PassInfo& info : AllPasses()) {
    if (name == info.name) return &info;
  }
  return nullptr;
}

bool IsRegisteredPass(std::string_view name) { return FindPass(name) != nullptr; }

}  // namespace onnx_bcast::passes
