// The explicit pass table: it drives --passes parsing, `opt --list-passes` and the pass table of
// docs/cli-opt.md (checked by ctest docs_readme_examples).
#ifndef ONNX_BCAST_PASSES_REGISTRY_H_
#define ONNX_BCAST_PASSES_REGISTRY_H_

#include <memory>
#include <string_view>

#include "absl/types/span.h"
#include "passes/pass.h"

namespace onnx_bcast::passes {

// Each pass's command-line name, written once: the table of registry.cc and the pass itself
// (its rewrite log and messages) read it.
inline constexpr char kAlignRanksPassName[] = "align-ranks";
inline constexpr char kEliminateRedundantBroadcastPassName[] = "eliminate-redundant-broadcast";
inline constexpr char kFoldConstantsPassName[] = "fold-constants";
inline constexpr char kLegalizeMeasuredPassName[] = "legalize-measured";
inline constexpr char kMaterializeBroadcastPassName[] = "materialize-broadcast";
inline constexpr char kUpgradeLegacyBroadcastPassName[] = "upgrade-legacy-broadcast";

struct PassInfo {
  const char* name;     ///< command-line name, kebab-case of the file name
  const char* summary;  ///< one line for --help
  std::unique_ptr<Pass> (*factory)();
  /// Runs a target's table (PassOptions::target): refused up front without a target.
  bool needs_target = false;
  /// Keeps the pipeline's shape tables current as it edits (see analysis_manager.h): the
  /// next pass and the target check read them instead of analysing the model again. Only a
  /// pass that edits the graph through RewriteContext alone may say true; the default costs a
  /// new analysis, never a stale one: such a pass starts with no tables held, and may hand
  /// back (AnalysisManager::Return) only tables it computed after its last edit.
  bool preserves_shapes = false;
};

/// Every pass, in the order they are listed.
absl::Span<const PassInfo> AllPasses();

/// The pass named `name`, or null.
const PassInfo* FindPass(std::string_view name);

/// FindPass(name) != null, as targets::PassNameCheck (profiles name passes; targets/ sits below
/// this registry, so the parser is handed this check).
bool IsRegisteredPass(std::string_view name);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_REGISTRY_H_
