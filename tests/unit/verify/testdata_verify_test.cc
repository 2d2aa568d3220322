// Every target on every model of the ONNX test data, verified against the original on the
// case's own inputs (the equivalent of `opt --target T --verify --test-data`): no rewrite may
// change what a model computes. Models the executor cannot run are verified node by node.
#include <filesystem>
#include <map>

#include "gtest/gtest.h"
#include "passes/pass_manager.h"
#include "proto/model_io.h"
#include "targets/targets.h"
#include "tests/support/sanitizer.h"
#include "verify/verify.h"

namespace onnx_bcast::verify {
namespace {

namespace fs = std::filesystem;

TEST(TestDataVerify, EveryTargetComputesWhatTheOriginalDid) {
  std::vector<fs::path> cases;
  for (const char* folder : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    const fs::path root = fs::path("/usr/share/libonnx-testdata/data") / folder;
    for (const auto& e : fs::directory_iterator(root)) {
      if (fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
    }
  }
  std::sort(cases.begin(), cases.end());
  ASSERT_GT(cases.size(), 1000u);
  std::map<std::string, int> whole, local, unchanged, refused;
  for (const targets::TargetProfile& target : targets::BuiltinTargets()) {
    absl::StatusOr<std::vector<const passes::PassInfo*>> pipeline =
        passes::ResolvePasses(target.passes);
    ASSERT_TRUE(pipeline.ok());
    // Under the sanitizers every 3rd case: the same rewrites and comparisons, a third the cost.
    for (size_t i = 0; i < cases.size(); i += test_support::SweepStride(3)) {
      const fs::path& dir = cases[i];
      absl::StatusOr<proto::Model> original = proto::LoadModel((dir / "model.onnx").string());
      ASSERT_TRUE(original.ok()) << original.status();
      proto::Model rewritten = *original;
      passes::PipelineOptions options;
      options.pass_options.target = &target;
      std::vector<passes::PassRun> runs;
      absl::Status s = passes::RunPipeline(&rewritten, *pipeline, options, &runs);
      if (!s.ok()) {
        // A refusal (e.g. ncnn's rank limit) is an answer, not a wrong rewrite.
        EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << dir << ": " << s;
        ++refused[target.name];
        continue;
      }
      if (proto::ModelsEqual(original->proto, rewritten.proto)) {
        ++unchanged[target.name];
        continue;
      }
      VerifyOptions vopts;
      vopts.samples = 2;
      if (fs::exists(dir / "test_data_set_0"))
        vopts.test_data = {(dir / "test_data_set_0").string()};
      absl::StatusOr<VerifyResult> r = Verify(*original, rewritten, vopts);
      if (!r.ok()) continue;  // the original itself cannot run on its inputs: nothing to compare
      EXPECT_TRUE(r->match) << target.name << " " << dir << "\n"
                            << FormatVerifyText(*r, "original", "rewritten");
      ++(r->mode == "local" ? local : whole)[target.name];
    }
  }
  for (const targets::TargetProfile& target : targets::BuiltinTargets()) {
    std::printf(
        "target %-10s rewritten and verified: %d whole-model, %d local; %d unchanged, "
        "%d refused\n",
        target.name.c_str(), whole[target.name], local[target.name], unchanged[target.name],
        refused[target.name]);
  }
}

}  // namespace
}  // namespace onnx_bcast::verify
