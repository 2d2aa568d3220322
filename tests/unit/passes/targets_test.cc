// Targets: the built-in tables, profile files, each target end to end on the example models
// (output passes libonnx's full check and satisfies the target's own table), the canonical
// round trip, and the legacy axis=1 upgrade against hand-computed values.
#include "passes/targets.h"

#include <cstring>
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/registry.h"
#include "proto/onnx_checks.h"
#include "proto/shapes.h"
#include "proto/tensor_data.h"
#include "tests/unit/passes/test_util.h"

namespace onnx_bcast::passes {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(Targets, BuiltinsNameRegisteredPassesAndKnownClasses) {
  ASSERT_EQ(BuiltinTargets().size(), 4u);
  for (const TargetProfile& t : BuiltinTargets()) {
    for (const std::string& pass : t.passes) EXPECT_NE(FindPass(pass), nullptr) << t.name;
    // The file form round-trips.
    absl::StatusOr<TargetProfile> back = ParseTargetProfile(FormatTargetProfile(t), "x");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->passes, t.passes);
    EXPECT_EQ(back->native_classes, t.native_classes);
    EXPECT_EQ(back->max_rank, t.max_rank);
  }
  EXPECT_EQ(FindTarget("nope"), nullptr);
}

TEST(Targets, ProfileFileErrorsNameTheLine) {
  EXPECT_THAT(std::string(ParseTargetProfile("name = x\nclasses = same\nmax_rank = four\n", "f")
                              .status()
                              .message()),
              HasSubstr("f:3: max_rank 'four'"));
  EXPECT_THAT(
      std::string(ParseTargetProfile("name = x\nclasses = sideways\n", "f").status().message()),
      HasSubstr("f:2: unknown broadcast class 'sideways'"));
  EXPECT_THAT(
      std::string(
          ParseTargetProfile("name = x\nclasses = same\npasses = frob\n", "f").status().message()),
      HasSubstr("f:3: unknown pass 'frob'"));
  EXPECT_THAT(std::string(ParseTargetProfile("colour = red\n", "f").status().message()),
              HasSubstr("f:1: unknown key 'colour'"));
  absl::StatusOr<TargetProfile> p =
      ParseTargetProfile("# my engine\nname = e\nclasses = same, scalar\nequal_rank = yes\n", "f");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->passes,
            (std::vector<std::string>{"upgrade-legacy-broadcast", "align-ranks", "legalize"}));
}

// A user-described engine: only same-shape and scalar broadcasts, rank <= 3.
TEST(Targets, ProfileFileDrivesTheGenericLegalizePass) {
  absl::StatusOr<TargetProfile> p = ParseTargetProfile(
      "name = tiny\nclasses = same, scalar\nmax_rank = 3\nequal_rank = true\n"
      "scalar_any_rank = true\n",
      "tiny.profile");
  ASSERT_TRUE(p.ok()) << p.status();
  proto::Model m = testing::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3,4] x, float[4] b, float[1] s, float[3,1] c) => (float[2,3,4] y) {
  t = Add (x, b)
  u = Mul (t, s)
  y = Sub (u, c)
})");
  ASSERT_TRUE(testing::RunTarget(*p, &m).ok());
  absl::StatusOr<std::vector<std::string>> v = FindTargetViolations(m, *p);
  ASSERT_TRUE(v.ok());
  EXPECT_THAT(*v, IsEmpty());
  EXPECT_TRUE(proto::CheckModel(m, true).ok());
  // The rank limit is refused with the node named.
  proto::Model big = testing::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,2,3,4] x, float[4] b) => (float[2,2,3,4] y) {
  y = Add (x, b)
})");
  // The pass leaves it; the target check lists it (opt then exits 3).
  const std::unordered_map<std::string, int> index = OriginalNodeIndex(big.proto.graph());
  ASSERT_TRUE(testing::RunTarget(*p, &big).ok());
  absl::StatusOr<std::vector<TargetViolation>> bv = CheckTarget(big, *p, &index);
  ASSERT_TRUE(bv.ok());
  ASSERT_EQ(bv->size(), 1u);
  EXPECT_EQ((*bv)[0].node, "Add#0");  // its index before the pipeline
  EXPECT_EQ((*bv)[0].graph, "main");
  EXPECT_THAT((*bv)[0].why, HasSubstr("exceeds tiny's maximum rank 3"));
  EXPECT_FALSE((*bv)[0].cannot_prove);
}

std::vector<std::string> ExampleModels() {
  return {BCAST_SOURCE_DIR "/models/cnn_block.onnx", BCAST_SOURCE_DIR "/models/legacy_axis.onnx",
          BCAST_SOURCE_DIR "/models/external/mlp.onnx"};
}

TEST(Targets, EveryTargetOnTheExampleModelsSatisfiesItsTable) {
  for (const std::string& path : ExampleModels()) {
    absl::StatusOr<proto::Model> original = proto::LoadModel(path);
    ASSERT_TRUE(original.ok()) << original.status();
    for (const TargetProfile& t : BuiltinTargets()) {
      proto::Model m = *original;
      ASSERT_TRUE(testing::RunTarget(t, &m).ok()) << path << " " << t.name;
      // (mlp.onnx's external weights are only found from its own directory.)
      if (proto::CheckModel(*original, true).ok()) {
        EXPECT_TRUE(proto::CheckModel(m, true).ok()) << path << " " << t.name;
      }
      absl::StatusOr<std::vector<std::string>> v = FindTargetViolations(m, t);
      ASSERT_TRUE(v.ok());
      if (t.name == "none") {
        // Gemm's C against a symbolic (M,N) is the one broadcast left (see materialize).
        for (const std::string& msg : *v) EXPECT_THAT(msg, HasSubstr("Gemm")) << path;
      } else {
        EXPECT_THAT(*v, IsEmpty()) << path << " " << t.name;
      }
      if (t.name == "explicit") {
        EXPECT_THAT(testing::RankMismatches(m), IsEmpty()) << path;
      }
      if (t.name == "none") {
        EXPECT_THAT(testing::ShapeMismatches(m), IsEmpty()) << path;
      }
      // Idempotent as a whole.
      proto::Model again = m;
      ASSERT_TRUE(testing::RunTarget(t, &again).ok());
      EXPECT_TRUE(proto::ModelsEqual(m.proto, again.proto)) << path << " " << t.name;
    }
  }
}

TEST(Targets, CanonicalUndoesNone) {
  for (const std::string& path : ExampleModels()) {
    absl::StatusOr<proto::Model> original = proto::LoadModel(path);
    ASSERT_TRUE(original.ok());
    for (int64_t fold_limit : {int64_t{0}, int64_t{1} << 20}) {
      PassOptions options;
      options.fold_limit_bytes = fold_limit;
      proto::Model m = *original;
      ASSERT_TRUE(testing::RunTarget(*FindTarget("none"), &m, nullptr, options).ok());
      ASSERT_TRUE(testing::RunTarget(*FindTarget("canonical"), &m, nullptr, options).ok());
      const ModelSummary before = Summarize(original->proto);
      const ModelSummary after = Summarize(m.proto);
      // legacy_axis gains the Unsqueeze the upgrade needs; nothing else may grow.
      const int64_t upgrade_nodes = path.find("legacy") != std::string::npos ? 1 : 0;
      EXPECT_LE(after.nodes, before.nodes + upgrade_nodes) << path;
      EXPECT_LE(after.initializer_bytes, before.initializer_bytes) << path;
      if (proto::CheckModel(*original, true).ok()) {
        EXPECT_TRUE(proto::CheckModel(m, true).ok()) << path;
      }
    }
  }
}

// A tiny evaluator for the ops the upgrade emits (Unsqueeze with an axes attribute, Add with
// numpy broadcasting), to check the upgraded graph against hand-computed values.
struct Tensor {
  std::vector<int64_t> dims;
  std::vector<float> data;
};

Tensor Eval(const onnx::GraphProto& g, std::map<std::string, Tensor> values) {
  for (const auto& n : g.node()) {
    const Tensor& a = values.at(n.input(0));
    if (n.op_type() == "Unsqueeze") {
      Tensor out = a;
      std::vector<int64_t> axes;
      for (const auto& attr : n.attribute()) axes.assign(attr.ints().begin(), attr.ints().end());
      std::sort(axes.begin(), axes.end());
      for (int64_t axis : axes) out.dims.insert(out.dims.begin() + axis, 1);
      values[n.output(0)] = out;
    } else if (n.op_type() == "Add") {
      const Tensor& b = values.at(n.input(1));
      const size_t rank = std::max(a.dims.size(), b.dims.size());
      auto pad = [&](std::vector<int64_t> d) {
        d.insert(d.begin(), rank - d.size(), 1);
        return d;
      };
      const std::vector<int64_t> da = pad(a.dims), db = pad(b.dims);
      Tensor out;
      for (size_t i = 0; i < rank; ++i) out.dims.push_back(std::max(da[i], db[i]));
      int64_t count = 1;
      for (int64_t d : out.dims) count *= d;
      for (int64_t k = 0; k < count; ++k) {
        int64_t rest = k, ia = 0, ib = 0, sa = 1, sb = 1;
        for (int64_t i = static_cast<int64_t>(rank) - 1; i >= 0; --i) {
          const int64_t idx = rest % out.dims[i];
          rest /= out.dims[i];
          ia += (da[i] == 1 ? 0 : idx) * sa;
          ib += (db[i] == 1 ? 0 : idx) * sb;
          sa *= da[i];
          sb *= db[i];
        }
        out.data.push_back(a.data[ia] + b.data[ib]);
      }
      values[n.output(0)] = out;
    } else {
      ADD_FAILURE() << "unexpected op " << n.op_type();
    }
  }
  return values.at(g.output(0).name());
}

TEST(UpgradeLegacyBroadcast, Axis1MatchesHandComputedValues) {
  absl::StatusOr<proto::Model> m = proto::LoadModel(BCAST_SOURCE_DIR "/models/legacy_axis.onnx");
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(testing::RunPass("upgrade-legacy-broadcast", &*m).ok());
  // a = 0..59 in shape (1,3,4,5); b = {1, 10, 100} from the model's initializer.
  Tensor a{{1, 3, 4, 5}, {}};
  for (int i = 0; i < 60; ++i) a.data.push_back(static_cast<float>(i));
  const onnx::TensorProto& init = m->proto.graph().initializer(0);
  absl::StatusOr<std::string> raw = proto::ReadRawBytes(init, ".", 1 << 20);
  ASSERT_TRUE(raw.ok());
  Tensor b{{3}, std::vector<float>(3)};
  std::memcpy(b.data.data(), raw->data(), 12);
  ASSERT_EQ(b.data, (std::vector<float>{1, 10, 100}));
  const Tensor c = Eval(m->proto.graph(), {{"a", a}, {"b", b}});
  ASSERT_EQ(c.dims, (std::vector<int64_t>{1, 3, 4, 5}));
  // Legacy axis=1: c[0,i,j,k] = a[0,i,j,k] + b[i] (not b[k], which numpy would pair).
  for (int i = 0; i < 3; ++i) {
    for (int jk = 0; jk < 20; ++jk) {
      const int k = i * 20 + jk;
      EXPECT_EQ(c.data[k], static_cast<float>(k) + b.data[i]) << "at channel " << i;
    }
  }
  EXPECT_TRUE(proto::CheckModel(*m, true).ok());
}

}  // namespace
}  // namespace onnx_bcast::passes
