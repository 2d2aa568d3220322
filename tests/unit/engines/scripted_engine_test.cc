// A new engine is one adapter and one profile (docs/architecture.md, "A new engine"): a scripted
// engine added that way, its adapter an entry of an engine table (as in engines/registry.cc)
// and its profile a file named `<engine>-<version>.profile` (as in engines/profiles/). The
// profile becomes its target, named after the engine, through the function the build's
// built-in targets go through; the target's name finds the adapter; the live probe runs the
// adapter in its child and judges it against our executor.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engines/engine.h"
#include "engines/live_probe.h"
#include "engines/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "proto/onnx_text.h"
#include "proto/tensor_codec.h"
#include "targets/targets.h"

namespace onnx_bcast::engines {
namespace {

// Adds a [C,1] constant to x [1,C,W] along C, as numpy does; refuses every other op at load.
class ScriptedEngine : public EngineAdapter {
 public:
  std::string name() const override { return "scripted"; }
  std::string version() const override { return "1.0"; }
  absl::Status Load(std::string_view bytes) override {
    absl::StatusOr<proto::Model> m = proto::ParseModelBytes(bytes, "fragment", ".", {});
    if (!m.ok()) return m.status();
    const onnx::GraphProto& g = m->proto.graph();
    if (g.node(g.node_size() - 1).op_type() != "Add") {
      return absl::InvalidArgumentError("only Add is scripted");
    }
    absl::StatusOr<proto::RawTensor> raw = proto::DecodeTensor(g.initializer(0), ".");
    if (!raw.ok()) return raw.status();
    bias_.resize(static_cast<size_t>(raw->NumElements()));
    std::memcpy(bias_.data(), raw->bytes.data(), raw->bytes.size());
    return absl::OkStatus();
  }
  absl::StatusOr<NamedTensors> Run(const NamedTensors& inputs,
                                   const std::vector<std::string>& names) override {
    runtime::Tensor y = inputs.at(0).second.Clone();
    const std::vector<int64_t>& s = y.shape();
    for (int64_t c = 0; c < s[1]; ++c) {
      for (int64_t w = 0; w < s[2]; ++w) y.data<float>()[c * s[2] + w] += bias_[c];
    }
    NamedTensors out;
    out.emplace_back(names.at(0), std::move(y));
    return out;
  }

 private:
  std::vector<float> bias_;
};

std::unique_ptr<EngineAdapter> MakeScriptedEngine() { return std::make_unique<ScriptedEngine>(); }

TEST(ScriptedEngine, AnAdapterAndAProfileAreTheWholeEngine) {
  // The profile: a file, named as probe-engine names it.
  absl::StatusOr<std::string> text = proto::ReadFileBytes(
      BCAST_SOURCE_DIR "/tests/unit/engines/scripted-1.0.profile", 1 << 20);
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<targets::TargetProfile> target =
      targets::ProfileTarget("scripted-1.0.profile", *text);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(target->name, "scripted");
  EXPECT_TRUE(target->Runs(broadcast::BroadcastClass::kPerChannel));
  EXPECT_FALSE(target->Runs(broadcast::BroadcastClass::kGeneral));
  EXPECT_EQ(target->max_rank, 4);

  // The adapter: one entry, found by the target's name.
  const EngineEntry engines[] = {{"scripted", &MakeScriptedEngine}};
  EXPECT_EQ(EngineNamesIn(engines), std::vector<std::string>{"scripted"});
  absl::StatusOr<EngineFactory> factory = FindEngineIn(engines, target->name);
  ASSERT_TRUE(factory.ok()) << factory.status();
  EXPECT_FALSE(FindEngineIn(engines, "ncnn").ok());

  // The live probe runs it in its child: a per-channel Add matches our executor.
  absl::StatusOr<proto::Model> fragment = proto::ParseModelText(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[1,4,8] in0) => (float[1,4,8] out) <float[4,1] c = {0.5, -1.25, 2, 3.5}> {\n"
      "  out = Add (in0, c)\n}\n",
      "fragment");
  ASSERT_TRUE(fragment.ok()) << fragment.status();
  LiveProbe live(*factory, target->name, "1.0", "");
  std::vector<absl::StatusOr<targets::LiveVerdict>> v = live.Decide({&*fragment});
  ASSERT_EQ(v.size(), 1u);
  ASSERT_TRUE(v[0].ok()) << v[0].status();
  EXPECT_TRUE(v[0]->matches) << v[0]->why;
}

}  // namespace
}  // namespace onnx_bcast::engines
