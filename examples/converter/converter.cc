// The broadcast step of a model converter, through the onnx_bcast C++ API: refuse a model whose
// broadcasts are wrong, rewrite it for the engine's target, prove the rewrite computes the same
// outputs, and only then hand it on (here: save it).
//
// Usage: converter MODEL TARGET OUT    e.g. converter cnn_block.onnx explicit out.onnx
// Exit: 0 converted; 1 broadcast error or verify mismatch; 2 any other error; 64 usage.
#include <cstdio>
#include <filesystem>
#include <string>

#include <onnx_bcast/onnx_bcast.h>

namespace {

int Fail(int code, const absl::Status& status) {
  std::fprintf(stderr, "converter: %s\n", std::string(status.message()).c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: converter MODEL TARGET OUT\n");
    return 64;
  }
  const std::string path = argv[1], target = argv[2], out = argv[3];

  // A converter holds the model in memory. External data, if any, stays beside the file, so
  // the in-memory calls are told where it is.
  onnx_bcast::LoadOptions load;
  load.base_dir = std::filesystem::path(path).parent_path().string();
  absl::StatusOr<onnx::ModelProto> model = onnx_bcast::LoadModel(path, load);
  if (!model.ok()) return Fail(2, model.status());

  // 1. Every broadcasting node gets a verdict; errors are data, each naming node, op, shapes.
  onnx_bcast::CheckOptions check_options;
  check_options.load = load;
  absl::StatusOr<onnx_bcast::CheckResult> check = onnx_bcast::Check(*model, check_options);
  if (!check.ok()) return Fail(2, check.status());
  if (check->HasError()) {
    for (const onnx_bcast::NodeVerdict& node : check->nodes) {
      if (node.verdict == onnx_bcast::Verdict::kError) {
        std::fprintf(stderr, "converter: %s\n", node.message.c_str());
      }
    }
    if (!check->contradiction.empty()) {
      std::fprintf(stderr, "converter: %s\n", check->contradiction.c_str());
    }
    return 1;
  }
  std::printf("check: %zu broadcasting nodes, %lld proven, %lld conditional\n",
              check->nodes.size(),
              static_cast<long long>(check->Count(onnx_bcast::Verdict::kProven)),
              static_cast<long long>(check->Count(onnx_bcast::Verdict::kConditional)));

  // 2. Rewrite a copy for the engine (Optimize leaves its argument untouched on error).
  onnx::ModelProto rewritten = *model;
  onnx_bcast::OptimizeOptions optimize_options;
  optimize_options.target = target;
  optimize_options.load = load;
  absl::StatusOr<onnx_bcast::OptimizeReport> report =
      onnx_bcast::Optimize(&rewritten, optimize_options);
  if (!report.ok()) return Fail(2, report.status());
  for (const onnx_bcast::PassReport& pass : report->passes) {
    std::printf("%s: %lld inserted, %lld removed, %lld initializers rewritten\n",
                pass.pass.c_str(), static_cast<long long>(pass.nodes_inserted),
                static_cast<long long>(pass.nodes_removed),
                static_cast<long long>(pass.initializers_rewritten));
  }
  for (const std::string& violation : report->violations) {
    std::printf("still outside the target: %s\n", violation.c_str());
  }

  // 3. Run both on the bundled executor and compare every output.
  onnx_bcast::VerifyOptions verify_options;
  verify_options.load = load;
  absl::StatusOr<onnx_bcast::VerifyResult> verified =
      onnx_bcast::Verify(*model, rewritten, verify_options);
  if (!verified.ok()) return Fail(2, verified.status());
  if (!verified->match) {
    std::fprintf(stderr, "%s", verified->text.c_str());
    return 1;
  }
  std::printf("verify: equal (%s), max abs error %g, max ULP %lld\n",
              verified->exact ? "bit-exact" : "within tolerance", verified->max_abs_error,
              static_cast<long long>(verified->max_ulp));

  // 4. Hand it on.
  onnx_bcast::SaveOptions save;
  save.base_dir = load.base_dir;
  if (absl::Status s = onnx_bcast::SaveModel(rewritten, out, save); !s.ok()) return Fail(2, s);
  std::printf("wrote %s\n", out.c_str());
  return 0;
}
