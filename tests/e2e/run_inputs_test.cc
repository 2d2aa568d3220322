// End-to-end tests of `onnx-bcast run` on what users touch (issue 16, item 5): given inputs
// checked against the declaration (exit 65), random-input bindings said on stderr, warnings for
// an unknown --dim and empty outputs, and mismatch statistics with the passing tolerances.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

using Result = test_support::CliResult;

class RunInputs : public test_support::TempDirTest {
 protected:
  std::string WriteModel(const std::string& name, const std::string& text) {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }

  // A float32 (or int64) TensorProto file.
  std::string WriteTensor(const std::string& name, const std::vector<int64_t>& dims,
                          const std::vector<float>& values, bool as_int64 = false) {
    onnx::TensorProto t;
    for (int64_t d : dims) t.add_dims(d);
    if (as_int64) {
      t.set_data_type(onnx::TensorProto::INT64);
      for (float v : values) t.add_int64_data(static_cast<int64_t>(v));
    } else {
      t.set_data_type(onnx::TensorProto::FLOAT);
      for (float v : values) t.add_float_data(v);
    }
    fs::create_directories(fs::path(Path(name)).parent_path());
    std::ofstream(Path(name), std::ios::binary) << t.SerializeAsString();
    return Path(name);
  }

  Result Run(std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    return test_support::RunCliIn(BCAST_CLI, args, dir_);
  }
};

// a is [N,3] and b is [N]: one N for both.
const char kTwoInputs[] = R"(
  <ir_version: 8, opset_import: ["" : 15]>
  g (float[N,3] a, float[N] b) => (float[N,3] y, float[N] z) { y = Identity(a) z = Identity(b) })";

std::vector<float> Zeros(size_t n) { return std::vector<float>(n, 0.f); }

void ExpectOneLine(const std::string& err) {
  ASSERT_FALSE(err.empty());
  EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
}

TEST_F(RunInputs, WrongShapeIsRefusedNamingModelInputAndDim) {
  const std::string model = WriteModel("m.onnxtxt", kTwoInputs);
  Result r = Run({model, "--input", "a=" + WriteTensor("a.pb", {2, 4}, Zeros(8))});
  EXPECT_EQ(r.code, 65) << r.err;
  ExpectOneLine(r.err);
  EXPECT_THAT(r.err, StartsWith(model + ": input 'a': given float32[2,4], the model declares "
                                        "float32[N,3]: dim 1 is 4, not 3"));
  r = Run({model, "--input", "a=" + WriteTensor("a3.pb", {6}, Zeros(6))});
  EXPECT_EQ(r.code, 65) << r.err;
  EXPECT_THAT(r.err, HasSubstr("input 'a': given float32[6], the model declares float32[N,3]: "
                               "rank 1, not 2"));
}

TEST_F(RunInputs, WrongTypeIsRefused) {
  const std::string model = WriteModel("m.onnxtxt", kTwoInputs);
  Result r = Run({model, "--input", "b=" + WriteTensor("b.pb", {2}, Zeros(2), true)});
  EXPECT_EQ(r.code, 65) << r.err;
  ExpectOneLine(r.err);
  EXPECT_THAT(r.err, StartsWith(model + ": input 'b': given int64[2], the model declares "
                                        "float32[N]: the element type differs"));
}

TEST_F(RunInputs, SymbolBoundUnlikeAcrossInputsIsRefused) {
  const std::string model = WriteModel("m.onnxtxt", kTwoInputs);
  const std::string a = "a=" + WriteTensor("a.pb", {2, 3}, Zeros(6));
  const std::string b = "b=" + WriteTensor("b.pb", {5}, Zeros(5));
  // Whatever the order on the command line, the first graph input binds N.
  for (const auto& args : {std::vector<std::string>{model, "--input", a, "--input", b},
                           std::vector<std::string>{model, "--input", b, "--input", a}}) {
    Result r = Run(args);
    EXPECT_EQ(r.code, 65) << r.err;
    ExpectOneLine(r.err);
    EXPECT_THAT(r.err, StartsWith(model + ": input 'b': given float32[5], the model declares "
                                          "float32[N]: N is 5 here but 2 in input 'a'"));
  }
  // Against --dim, and in a test data directory (named in the message).
  Result r = Run({model, "--input", a, "--dim", "N=4"});
  EXPECT_EQ(r.code, 65) << r.err;
  EXPECT_THAT(r.err, HasSubstr("input 'a': given float32[2,3], the model declares float32[N,3]: "
                               "N is 2 here but --dim N=4"));
  WriteTensor("td/input_0.pb", {2, 3}, Zeros(6));
  WriteTensor("td/input_1.pb", {3}, Zeros(3));
  r = Run({model, "--test-data", Path("td")});
  EXPECT_EQ(r.code, 65) << r.err;
  EXPECT_THAT(r.err, StartsWith(model + ": " + Path("td") + ": input 'b': given float32[3]"));
  // Consistent inputs run.
  r = Run({model, "--input", a, "--input", "b=" + WriteTensor("b2.pb", {2}, Zeros(2))});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST_F(RunInputs, NamesInRefusalsAreEscaped) {
  // An input named with a terminal escape (clear screen): data, never acted on.
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(15);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  const std::string name = "x\x1b[2J";
  for (const char* io : {"in", "out"}) {
    onnx::ValueInfoProto* v = std::string(io) == "in" ? g->add_input() : g->add_output();
    v->set_name(std::string(io) == "in" ? name : "y");
    onnx::TypeProto::Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_param("N\x1b[2J");
  }
  onnx::NodeProto* node = g->add_node();
  node->set_op_type("Identity");
  node->add_input(name);
  node->add_output("y");
  std::ofstream(Path("e.onnx"), std::ios::binary) << m.SerializeAsString();
  Result r = Run({Path("e.onnx"), "--input", name + "=" + WriteTensor("x.pb", {2, 2}, Zeros(4))});
  EXPECT_EQ(r.code, 65) << r.err;
  ExpectOneLine(r.err);
  EXPECT_THAT(r.err, HasSubstr("input 'x\\x1b[2J'"));
  EXPECT_THAT(r.err, Not(HasSubstr("\x1b")));
  r = Run({Path("e.onnx"), "--dim", "M\x1b=2"});
  EXPECT_THAT(r.err, HasSubstr("--dim M\\x1b=2"));
  EXPECT_THAT(r.err, Not(HasSubstr("\x1b")));
}

TEST_F(RunInputs, RandomInputsSayTheirBindings) {
  const std::string model = WriteModel("m.onnxtxt", kTwoInputs);
  Result r = Run({model});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "run: random inputs with N=1 (default) (set with --dim NAME=VALUE)\n");
  r = Run({model, "--dim", "N=4"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "run: random inputs with N=4 (set with --dim NAME=VALUE)\n");
  EXPECT_THAT(r.out, HasSubstr("float32[4,3]"));
  // A given input binds N for the random one.
  r = Run({model, "--input", "a=" + WriteTensor("a.pb", {2, 3}, Zeros(6))});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "run: random inputs with N=2 (as given) (set with --dim NAME=VALUE)\n");
  EXPECT_THAT(r.out, HasSubstr("output 'z' float32[2]"));
  // Unnamed dims too; a model without symbolic dims says nothing.
  r = Run({WriteModel("u.onnxtxt", R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[?,2] x) => (float[?,2] y) { y = Identity(x) })")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err,
            "run: random inputs with 1 unnamed dim(s)=1 (default) (set with --dim "
            "NAME=VALUE)\n");
  r = Run({WriteModel("s.onnxtxt", R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2] x) => (float[2] y) { y = Identity(x) })")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// An unknown --dim name is a usage error in every subcommand (issue 31 item 8): run used to
// warn and exit 0.
TEST_F(RunInputs, UnknownDimIsUsageError) {
  const std::string model = WriteModel("m.onnxtxt", kTwoInputs);
  Result r = Run({model, "--dim", "n=3"});
  EXPECT_EQ(r.code, 64) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--dim n=3: the model's inputs have no symbol 'n' (they have N)"));
  EXPECT_EQ(r.out, "");
}

TEST_F(RunInputs, EmptyOutputWarns) {
  const std::string model = WriteModel("m.onnxtxt", kTwoInputs);
  Result r = Run({model, "--dim", "N=0"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("random inputs: warning: output 'y' is empty (shape [0,3])\n"));
  EXPECT_THAT(r.err, HasSubstr("random inputs: warning: output 'z' is empty (shape [0])\n"));
  r = Run({model, "--dim", "N=1"});
  EXPECT_THAT(r.err, Not(HasSubstr("empty")));
}

TEST_F(RunInputs, MismatchPrintsStatisticsAndPassingTolerances) {
  const std::string model = WriteModel("m.onnxtxt", R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[4] x) => (float[4] y) { y = Identity(x) })");
  WriteTensor("td/input_0.pb", {4}, {1, 2, 3, 100});
  WriteTensor("td/output_0.pb", {4}, {1, 2.01f, 3, 90.5f});
  Result r = Run({model, "--test-data", Path("td")});
  EXPECT_EQ(r.code, 1) << r.err;
  // Errors 0.00999999 at 1 and 9.5 at 3: atol 9.5 - 1e-3 * 90.5 = 9.4095 -> 9.41; rtol
  // (9.5 - 1e-7) / 90.5 = 0.10497 -> 0.105.
  EXPECT_THAT(r.err,
              HasSubstr(Path("td") + ": output 'y': 2 of 4 element(s) differ; max abs "
                                     "error 9.5 at 3 [3]; max rel error 0.105 at 3 [3]; smallest "
                                     "passing --atol 9.41 (at rtol 0.001), --rtol 0.105 (at atol "
                                     "1e-07)\n"));
  // The printed figures pass, and a little less does not.
  EXPECT_EQ(Run({model, "--test-data", Path("td"), "--atol", "9.41"}).code, 0);
  EXPECT_EQ(Run({model, "--test-data", Path("td"), "--atol", "9.40"}).code, 1);
  EXPECT_EQ(Run({model, "--test-data", Path("td"), "--rtol", "0.105"}).code, 0);
  EXPECT_EQ(Run({model, "--test-data", Path("td"), "--rtol", "0.104"}).code, 1);
  // An expected 0 no rtol accepts.
  WriteTensor("zero/input_0.pb", {4}, {1, 2, 3, 0.5f});
  WriteTensor("zero/output_0.pb", {4}, {1, 2, 3, 0});
  r = Run({model, "--test-data", Path("zero")});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("max abs error 0.5 at 3 [3]; smallest passing --atol 0.5 (at rtol "
                               "0.001), --rtol none (at atol 1e-07) (an expected 0 differs by "
                               "more than atol)"));
  // A NaN no tolerance accepts.
  WriteTensor("nan/input_0.pb", {4}, {1, 2, 3, 4});
  WriteTensor("nan/output_0.pb", {4}, {1, 2, 3, std::nanf("")});
  r = Run({model, "--test-data", Path("nan")});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("smallest passing --atol none (at rtol 0.001), --rtol none (at "
                               "atol 1e-07) (a NaN or infinity differs)"));
}

}  // namespace
}  // namespace onnx_bcast
