// What `opt` prints and writes: per-pass counts, every rewrite (--dry-run, --debug), and the
// JSON log of --report.
#pragma once

#include <string>
#include <vector>

#include "passes/pass_manager.h"

namespace onnx_bcast::passes {

struct OptReport {
  std::string model_path;
  std::string output_path;  ///< empty for --dry-run
  std::string target;       ///< target name, or empty for --passes
  std::vector<PassRun> runs;
  ModelSummary before;
  ModelSummary after;
  std::vector<std::string> violations;  ///< nodes outside the target's table afterwards
  std::string error;                    ///< the error that stopped the pipeline, if any
};

/// One line per pass ("align-ranks: 2 inserted, ..."); with `rewrites`, each rewrite indented
/// below its pass; with `debug`, the "does not apply" reasons too.
std::string FormatOptText(const OptReport& report, bool rewrites, bool debug);

/// The --report JSON document.
std::string FormatOptJson(const OptReport& report);

}  // namespace onnx_bcast::passes
