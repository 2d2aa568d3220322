// The live form oracle on an installed engine (targets/form_oracle.h): each fragment is run on
// the engine in a child process (engines/isolated_run.h) and on our executor with the same
// seeded inputs, and judged as probe-engine judges (engines/judge.h: the error model of
// runtime/exec/error_model.h against a float64 reference). Engine-neutral:
// any adapter of engines/registry.h plugs in by name.
//
// How a fragment is run: each graph input (a computed operand) is fed through LeakyRelu with
// alpha 1 (floats, fed in [-1.5, -0.5) and [0.5, 1.5): both signs, as PRelu's slope and Max/Min
// need, and no division by a value near zero; the layer passes them as they are) or Not (bools),
// so that the engine sees a computed tensor, as in the model; int inputs are fed directly, in
// [1, 4). (Fed only positive values through Relu, a rank-6 PRelu that OpenCV computes wrongly
// for negative inputs was called a match.)
// Float constants over 64 elements get seeded values in [0.5, 1.5) (the form, not the
// weights, decides; and so equal blocks with other weights share a cache entry); smaller
// constants and every non-float constant keep their values (clamp bounds, shapes, axes).
//
// Cache: per (engine, version, fragment bytes after the above), in memory and, with a
// directory, on disk (one small file per form, named by a hash of the key and holding the key's
// second hash to tell collisions apart), so that a model with many identical blocks, or a
// second opt, runs each form once.
#ifndef ONNX_BCAST_ENGINES_LIVE_PROBE_H_
#define ONNX_BCAST_ENGINES_LIVE_PROBE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engines/engine.h"
#include "targets/form_oracle.h"

namespace onnx_bcast::engines {

class LiveProbe : public targets::FormOracle {
 public:
  /// `cache_dir` empty: memory only. The engine's name and version label the cache.
  LiveProbe(engines::EngineFactory make_engine, std::string engine, std::string version,
            std::string cache_dir);

  std::string label() const override;
  std::vector<absl::StatusOr<targets::LiveVerdict>> Decide(
      const std::vector<const proto::Model*>& fragments) override;
  std::string Summary() const override;

  int64_t forms_run() const { return forms_run_; }
  int64_t cache_hits() const { return cache_hits_; }
  double seconds() const { return seconds_; }

 private:
  engines::EngineFactory make_engine_;
  std::string engine_;
  std::string version_;
  std::string cache_dir_;
  std::map<std::string, targets::LiveVerdict> memory_;  // key: the fragment's canonical bytes
  int64_t forms_run_ = 0;
  int64_t cache_hits_ = 0;
  double seconds_ = 0;
};

/// The live oracle for target profile `target_name` ("opencv", "opencv-4.6", a file's name): the
/// engine of engines/registry.h whose name starts the target's name, made once here to read its
/// version. NotFound when this build has no such engine, or the engine does not start (the
/// caller then decides by the table).
absl::StatusOr<std::unique_ptr<LiveProbe>> MakeLiveProbe(const std::string& target_name,
                                                         const std::string& cache_dir);

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_LIVE_PROBE_H_
