// Model I/O: lossless round trips over the ONNX test data and models/, refusals with their
// status codes and messages, external data confinement, and atomic saving.
#include "proto/model_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/unknown_field_set.h"
#include "gtest/gtest.h"
#include "proto/external_data.h"
#include "proto/onnx_checks.h"
#include "proto/onnx_text.h"
#include "proto/safe_write.h"
#include "proto/tensor_util.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"

namespace onnx_bcast::proto {
namespace {

namespace fs = std::filesystem;
using test_support::ReadAll;
using ::testing::HasSubstr;

const char kTestData[] = "/usr/share/libonnx-testdata/data";

// Each test's own directory.
class TempDir : public test_support::TempDir {
 public:
  TempDir() : test_support::TempDir("bcast_io") {}
};

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A small valid model: y = x + w with w a [2,3] float initializer.
onnx::ModelProto SmallModel() {
  absl::StatusOr<Model> m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2,3] x) => (float[2,3] y) {
      y = Add(x, w)
    })");
  EXPECT_TRUE(m.ok()) << m.status();
  onnx::TensorProto* w = m->proto.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(3);
  for (int i = 0; i < 6; ++i) w->add_float_data(static_cast<float>(i));
  return m->proto;
}

std::string Bytes(const onnx::ModelProto& m) {
  absl::StatusOr<std::string> s = SerializeModel(m);
  EXPECT_TRUE(s.ok());
  return *s;
}

std::vector<std::string> TestDataModels() {
  std::vector<std::string> paths;
  if (!fs::exists(kTestData)) return paths;
  for (const auto& e : fs::recursive_directory_iterator(kTestData)) {
    if (e.path().filename() == "model.onnx") paths.push_back(e.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Saving copies external payloads beside the output (OUT.data) and rewrites their locations,
// so "lossless" means the same payload bytes: inline every external payload before comparing.
onnx::ModelProto Inlined(onnx::ModelProto model, const std::string& base_dir, int* external) {
  ForEachModelTensor(&model, [&](onnx::TensorProto* t) {
    if (t->data_location() != onnx::TensorProto::EXTERNAL) return;
    absl::StatusOr<std::string> bytes = ReadExternalData(*t, base_dir);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    t->set_raw_data(*bytes);
    t->clear_external_data();
    t->clear_data_location();
    ++*external;
  });
  return model;
}

void ExpectRoundTrip(const std::string& path, const TempDir& dir, int* external = nullptr) {
  absl::StatusOr<Model> model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::string out = dir / "out.onnx";
  ASSERT_TRUE(SaveModel(*model, out).ok()) << path;
  absl::StatusOr<Model> again = LoadModel(out);
  ASSERT_TRUE(again.ok()) << again.status();
  int in_external = 0, out_external = 0;
  const onnx::ModelProto before = Inlined(model->proto, model->base_dir, &in_external);
  const onnx::ModelProto after = Inlined(again->proto, again->base_dir, &out_external);
  EXPECT_EQ(in_external, out_external) << path << ": external tensors must stay external";
  if (external != nullptr) *external += in_external;
  std::string diff;
  EXPECT_TRUE(ModelsEqual(before, after, &diff)) << path << "\n" << diff;
  // And equal to what protobuf itself parses, so validation did not alter anything.
  onnx::ModelProto direct;
  ASSERT_TRUE(direct.ParseFromString(ReadAll(path)));
  int direct_external = 0;
  EXPECT_TRUE(ModelsEqual(Inlined(direct, model->base_dir, &direct_external), after, &diff))
      << path << "\n"
      << diff;
}

TEST(RoundTrip, EveryTestDataModelIsLossless) {
  const std::vector<std::string> paths = TestDataModels();
  ASSERT_GT(paths.size(), 1000u) << "libonnx-testdata missing? run scripts/setup.sh";
  TempDir dir;
  for (const std::string& path : paths) ExpectRoundTrip(path, dir);
}

TEST(RoundTrip, EveryExampleModelIsLossless) {
  TempDir dir;
  int count = 0, external = 0;
  for (const auto& e : fs::recursive_directory_iterator(BCAST_SOURCE_DIR "/models")) {
    if (e.path().extension() != ".onnx") continue;
    ExpectRoundTrip(e.path().string(), dir, &external);
    ++count;
  }
  EXPECT_GE(count, 3);
  EXPECT_GE(external, 1) << "models/external should exercise external data";
}

TEST(RoundTrip, KeepsUnknownFieldsMetadataFunctionsAndEncodings) {
  onnx::ModelProto m = SmallModel();
  m.set_doc_string("model doc");
  m.set_model_version(42);
  m.set_producer_version("9.9");
  auto* prop = m.add_metadata_props();
  prop->set_key("k");
  prop->set_value("v");
  m.mutable_graph()->set_doc_string("graph doc");
  auto* vi = m.mutable_graph()->add_value_info();
  vi->set_name("extra");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* fn = m.add_functions();
  fn->set_name("F");
  fn->set_domain("custom");
  fn->add_input("a");
  fn->add_output("b");
  auto* fnode = fn->add_node();
  fnode->set_op_type("Relu");
  fnode->add_input("a");
  fnode->add_output("b");
  // A raw-encoded tensor beside the typed one.
  auto* raw = m.mutable_graph()->add_initializer();
  raw->set_name("raw");
  raw->set_data_type(onnx::TensorProto::INT64);
  raw->add_dims(2);
  raw->set_raw_data(std::string(16, '\1'));
  // Fields from a future IR version: field numbers this build does not know.
  m.GetReflection()->MutableUnknownFields(&m)->AddVarint(999, 7);
  m.mutable_graph()
      ->GetReflection()
      ->MutableUnknownFields(m.mutable_graph())
      ->AddLengthDelimited(998, "future");
  TempDir dir;
  WriteFile(dir / "in.onnx", Bytes(m));
  absl::StatusOr<Model> loaded = LoadModel(dir / "in.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(SaveModel(*loaded, dir / "out.onnx").ok());
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(ReadAll(dir / "out.onnx")));
  std::string diff;
  EXPECT_TRUE(ModelsEqual(m, back, &diff)) << diff;
  EXPECT_EQ(back.GetReflection()->GetUnknownFields(back).field_count(), 1);
  EXPECT_EQ(back.graph().initializer(1).raw_data(), std::string(16, '\1'));
  EXPECT_EQ(back.graph().initializer(0).float_data_size(), 6);
}

TEST(RoundTrip, TextFormLoads) {
  TempDir dir;
  WriteFile(dir / "m.onnxtxt", R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N,3] a, float[3] b) => (float[N,3] c) { c = Add(a, b) })");
  absl::StatusOr<Model> m = LoadModel(dir / "m.onnxtxt");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->proto.graph().node(0).op_type(), "Add");
  EXPECT_THAT(PrintGraph(m->proto.graph()), HasSubstr("c = Add(a, b)"));
  WriteFile(dir / "bad.onnxtxt", "<ir_version: 8> g (float a) => (");
  absl::StatusOr<Model> bad = LoadModel(dir / "bad.onnxtxt");
  EXPECT_THAT(bad.status().message(), HasSubstr("ONNX text parse error"));
  EXPECT_EQ(std::string(bad.status().message()).find('\n'), std::string::npos);
}

// Load parses the binary form as it reads it, 1 MiB at a time: a model of several reads, with
// a payload and names across their boundaries, must come out as protobuf parses it whole.
TEST(RoundTrip, ModelLargerThanOneReadLoadsWhole) {
  TempDir dir;
  onnx::ModelProto m = SmallModel();
  onnx::TensorProto* big = m.mutable_graph()->add_initializer();
  big->set_name("big");
  big->set_data_type(onnx::TensorProto::UINT8);
  big->add_dims(3 << 20);
  std::string payload(3 << 20, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 131 + 7);
  big->set_raw_data(payload);
  for (int i = 0; i < 60000; ++i) {
    onnx::NodeProto* n = m.mutable_graph()->add_node();
    n->set_op_type("Identity");
    n->add_input(i == 0 ? "y" : "r" + std::to_string(i - 1));
    n->add_output("r" + std::to_string(i));
  }
  const std::string bytes = m.SerializeAsString();
  ASSERT_GT(bytes.size(), size_t{4} << 20);
  WriteFile(dir / "big.onnx", bytes);
  absl::StatusOr<Model> loaded = LoadModel(dir / "big.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->proto.SerializeAsString(), bytes);
}

// ---------------------------------------------------------------- refusals at load

struct LoadCase {
  std::string name;
  std::string bytes;
  std::string message;
};

void PrintTo(const LoadCase& c, std::ostream* os) { *os << c.name; }

class LoadRefusal : public ::testing::TestWithParam<LoadCase> {};

TEST_P(LoadRefusal, RefusedWithOneLine) {
  TempDir dir;
  const std::string path = dir / "m.onnx";
  WriteFile(path, GetParam().bytes);
  absl::StatusOr<Model> m = LoadModel(path);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()), HasSubstr(GetParam().message));
  EXPECT_EQ(std::string(m.status().message()).rfind(path, 0), 0u) << "starts with the path";
  EXPECT_EQ(std::string(m.status().message()).find('\n'), std::string::npos);
}

// SmallModel held in memory with `dir` as its base (where its external data would live).
Model SmallModelIn(const TempDir& dir) {
  Model m;
  m.proto = SmallModel();
  m.path = "<memory>";
  m.base_dir = dir.path();
  return m;
}

onnx::ModelProto WithTensor(const std::function<void(onnx::TensorProto*)>& edit) {
  onnx::ModelProto m = SmallModel();
  edit(m.mutable_graph()->mutable_initializer(0));
  return m;
}

onnx::ModelProto NestedIfs(int depth) {
  onnx::ModelProto m = SmallModel();
  onnx::GraphProto inner;
  inner.set_name("leaf");
  for (int i = 0; i < depth; ++i) {
    onnx::GraphProto outer;
    outer.set_name("level");
    auto* node = outer.add_node();
    node->set_op_type("If");
    auto* attr = node->add_attribute();
    attr->set_name("then_branch");
    attr->set_type(onnx::AttributeProto::GRAPH);
    *attr->mutable_g() = inner;
    inner = outer;
  }
  *m.mutable_graph()->add_node()->add_attribute()->mutable_g() = inner;
  return m;
}

std::vector<LoadCase> LoadCases() {
  const std::string good = Bytes(SmallModel());
  onnx::ModelProto no_graph = SmallModel();
  no_graph.clear_graph();
  onnx::ModelProto no_opset = SmallModel();
  no_opset.clear_opset_import();
  // Serialization order puts opset_import (field 8) after the graph (field 7): cutting the
  // file at that boundary leaves a parseable model without opsets.
  const std::string boundary = Bytes(no_opset);
  std::string random(4096, '\0');
  uint32_t state = 12345;
  for (char& c : random) {
    state = state * 1103515245 + 12345;
    c = static_cast<char>(state >> 16);
  }
  return {
      {"Empty", "", "empty file"},
      {"RandomBytes", random, "not a valid ONNX model"},
      {"TruncatedMidField", good.substr(0, good.size() / 2), "not a valid ONNX model"},
      {"TruncatedAtFieldBoundary", boundary, "imports no opset"},
      {"ConcatenatedModels", good + good, "imported twice"},
      {"NoGraph", Bytes(no_graph), "no graph"},
      {"NestingPastLimit", Bytes(NestedIfs(60)), "nested deeper than the limit"},
      {"PayloadDisagreesWithDims",
       Bytes(WithTensor([](onnx::TensorProto* t) { t->add_float_data(1); })),
       "payload has 7 values, dims need 6"},
      {"RawPayloadDisagreesWithDims", Bytes(WithTensor([](onnx::TensorProto* t) {
         t->clear_float_data();
         t->set_raw_data(std::string(12, '\0'));
       })),
       "payload has 12 bytes, dims need 24"},
      {"NegativeDim", Bytes(WithTensor([](onnx::TensorProto* t) { t->set_dims(0, -2); })),
       "negative dim -2"},
      {"DimsOverflowInt64", Bytes(WithTensor([](onnx::TensorProto* t) {
         t->set_dims(0, int64_t{1} << 40);
         t->set_dims(1, int64_t{1} << 40);
       })),
       "more than the limit"},
      {"HugeDeclaredShapeNoData", Bytes(WithTensor([](onnx::TensorProto* t) {
         t->clear_float_data();
         t->set_dims(0, 1000000);
         t->set_dims(1, 1000000);
       })),
       "more than the limit"},
  };
}

INSTANTIATE_TEST_SUITE_P(Hostile, LoadRefusal, ::testing::ValuesIn(LoadCases()),
                         [](const auto& info) { return info.param.name; });

TEST(LoadRefusal, MissingFileAndDirectory) {
  TempDir dir;
  EXPECT_EQ(LoadModel(dir / "nope.onnx").status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<Model> d = LoadModel(dir.path());
  EXPECT_THAT(d.status().message(), HasSubstr("is a directory"));
}

TEST(LoadRefusal, ConfigurableLimits) {
  TempDir dir;
  WriteFile(dir / "m.onnx", Bytes(SmallModel()));
  Limits limits;
  limits.max_nodes = 0;
  EXPECT_THAT(LoadModel(dir / "m.onnx", limits).status().message(), HasSubstr("limit of 0 nodes"));
  limits = Limits();
  limits.max_file_bytes = 10;
  EXPECT_EQ(LoadModel(dir / "m.onnx", limits).status().code(),
            absl::StatusCode::kResourceExhausted);
  limits = Limits();
  limits.max_tensor_elements = 5;
  EXPECT_THAT(LoadModel(dir / "m.onnx", limits).status().message(),
              HasSubstr("more than the limit of 5 elements"));
}

// ---------------------------------------------------------------- external data

// Writes SmallModel with `w` external at `location` inside `dir/model/`.
std::string ExternalModel(const TempDir& dir, const std::string& location,
                          const std::string& offset = "0", const std::string& length = "24") {
  fs::create_directories(dir / "model");
  onnx::ModelProto m = WithTensor([&](onnx::TensorProto* t) {
    t->clear_float_data();
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value(location);
    if (!offset.empty()) {
      e = t->add_external_data();
      e->set_key("offset");
      e->set_value(offset);
    }
    if (!length.empty()) {
      e = t->add_external_data();
      e->set_key("length");
      e->set_value(length);
    }
  });
  const std::string path = dir / "model/m.onnx";
  WriteFile(path, Bytes(m));
  return path;
}

std::string Floats(int n) {
  std::string s(n * 4, '\0');
  for (int i = 0; i < n; ++i) {
    const float f = static_cast<float>(i);
    std::memcpy(&s[i * 4], &f, 4);
  }
  return s;
}

TEST(ExternalData, LoadsLazilyAndReads) {
  TempDir dir;
  const std::string path = ExternalModel(dir, "w.bin", "8", "24");
  WriteFile(dir / "model/w.bin", std::string(8, 'x') + Floats(6));
  absl::StatusOr<Model> m = LoadModel(path);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<std::string> data = ReadExternalData(m->proto.graph().initializer(0), m->base_dir);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(*data, Floats(6));
}

struct ExternalCase {
  std::string name;
  std::string location, offset, length;
  std::function<void(const TempDir&)> setup;
  std::string message;
};

void PrintTo(const ExternalCase& c, std::ostream* os) { *os << c.name; }

class ExternalRefusal : public ::testing::TestWithParam<ExternalCase> {};

TEST_P(ExternalRefusal, Refused) {
  TempDir dir;
  const ExternalCase& c = GetParam();
  const std::string path = ExternalModel(dir, c.location, c.offset, c.length);
  WriteFile(dir / "model/w.bin", Floats(6));
  WriteFile(dir / "outside.bin", Floats(6));
  if (c.setup) c.setup(dir);
  absl::StatusOr<Model> m = LoadModel(path);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()), HasSubstr(c.message));
  EXPECT_EQ(std::string(m.status().message()).rfind(path, 0), 0u);
}

std::vector<ExternalCase> ExternalCases() {
  return {
      {"DotDot", "../outside.bin", "0", "24", nullptr, "escapes the model directory"},
      {"NestedDotDot", "a/../../outside.bin", "0", "24", nullptr, "escapes the model directory"},
      {"Absolute", "/etc/passwd", "0", "24", nullptr, "is absolute"},
      {"SymlinkOutside", "link.bin", "0", "24",
       [](const TempDir& d) { fs::create_symlink(d / "outside.bin", d / "model/link.bin"); },
       "goes through the symlink 'link.bin'"},
      {"SymlinkedDirectory", "d/w.bin", "0", "24",
       [](const TempDir& d) { fs::create_directory_symlink(d.path(), d / "model/d"); },
       "goes through the symlink 'd'"},
      {"HardLink", "hard.bin", "0", "24",
       [](const TempDir& d) { fs::create_hard_link(d / "outside.bin", d / "model/hard.bin"); },
       "is a hard link"},
      {"Directory", "sub", "0", "24",
       [](const TempDir& d) { fs::create_directories(d / "model/sub"); }, "not a regular file"},
      {"Fifo", "fifo", "0", "24",
       [](const TempDir& d) { ::mkfifo((d / "model/fifo").c_str(), 0600); }, "not a regular file"},
      {"Missing", "missing.bin", "0", "24", nullptr, "not found"},
      {"OffsetPastEnd", "w.bin", "25", "", nullptr, "past the end"},
      {"OffsetPlusLengthPastEnd", "w.bin", "8", "24", nullptr, "past the end"},
      {"OffsetOverflow", "w.bin", "9223372036854775807", "24", nullptr, "past the end"},
      {"LengthOverflow", "w.bin", "1", "9223372036854775807", nullptr, "past the end"},
      {"LengthTooManyDigits", "w.bin", "0", "99999999999999999999", nullptr,
       "not a non-negative decimal"},
      {"LengthNotDecimal", "w.bin", "0", "0x18", nullptr, "not a non-negative decimal"},
      {"LengthSigned", "w.bin", "0", "+24", nullptr, "not a non-negative decimal"},
      {"LengthNegative", "w.bin", "0", "-24", nullptr, "not a non-negative decimal"},
      {"LengthSpaces", "w.bin", "0", " 24", nullptr, "not a non-negative decimal"},
      {"LengthDisagreesWithDims", "w.bin", "0", "20", nullptr, "external data has 20 bytes"},
  };
}

INSTANTIATE_TEST_SUITE_P(Hostile, ExternalRefusal, ::testing::ValuesIn(ExternalCases()),
                         [](const auto& info) { return info.param.name; });

// Every component is opened with O_NOFOLLOW: even a link that stays inside is refused, since
// what it resolves to could be swapped between a check and the read.
TEST(ExternalData, SymlinkInsideDirectoryIsRefused) {
  TempDir dir;
  const std::string path = ExternalModel(dir, "link.bin");
  WriteFile(dir / "model/w.bin", Floats(6));
  fs::create_symlink("w.bin", dir / "model/link.bin");
  EXPECT_THAT(std::string(LoadModel(path).status().message()), HasSubstr("symlink"));
}

TEST(ExternalData, StrictDecimal) {
  int64_t v = 0;
  EXPECT_TRUE(ParseStrictDecimal("0", &v));
  EXPECT_TRUE(ParseStrictDecimal("9223372036854775807", &v));
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_FALSE(ParseStrictDecimal("9223372036854775808", &v));
  EXPECT_FALSE(ParseStrictDecimal("", &v));
  EXPECT_FALSE(ParseStrictDecimal("1e3", &v));
  EXPECT_FALSE(ParseStrictDecimal("12 ", &v));
}

TEST(ExternalData, SavedToAnotherDirectoryCarriesTheData) {
  TempDir dir;
  const std::string path = ExternalModel(dir, "sub/w.bin");
  fs::create_directories(dir / "model/sub");
  WriteFile(dir / "model/sub/w.bin", Floats(6));
  absl::StatusOr<Model> m = LoadModel(path);
  ASSERT_TRUE(m.ok()) << m.status();
  fs::create_directories(dir / "out");
  ASSERT_TRUE(SaveModel(*m, dir / "out/m.onnx").ok());
  // Copied into a file named after the output; the location is rewritten, nothing else.
  EXPECT_FALSE(fs::exists(dir / "out/sub"));
  EXPECT_EQ(ReadAll(dir / "out/m.onnx.data"), Floats(6));
  absl::StatusOr<Model> back = LoadModel(dir / "out/m.onnx");
  ASSERT_TRUE(back.ok()) << back.status();
  onnx::ModelProto expected = m->proto;
  for (auto& e : *expected.mutable_graph()->mutable_initializer(0)->mutable_external_data()) {
    if (e.key() == "location") e.set_value("m.onnx.data");
  }
  EXPECT_TRUE(ModelsEqual(expected, back->proto));
  // Same directory: the data file is referenced, not copied.
  ASSERT_TRUE(SaveModel(*m, dir / "model/m2.onnx").ok());
  EXPECT_TRUE(LoadModel(dir / "model/m2.onnx").ok());
}

TEST(ExternalData, ExternalDataOptionMovesLargePayloads) {
  TempDir dir;
  Model m = SmallModelIn(dir);
  SaveOptions options;
  options.external_data = true;
  options.external_threshold_bytes = 16;
  ASSERT_TRUE(SaveModel(m, dir / "e.onnx", options).ok());
  absl::StatusOr<Model> back = LoadModel(dir / "e.onnx");
  ASSERT_TRUE(back.ok()) << back.status();
  const onnx::TensorProto& w = back->proto.graph().initializer(0);
  EXPECT_EQ(w.data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(w.float_data_size(), 0);
  absl::StatusOr<std::string> data = ReadExternalData(w, back->base_dir);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(*data, Floats(6));
  EXPECT_TRUE(fs::exists(dir / "e.onnx.data"));
}

// ---------------------------------------------------------------- saving

bool NoTemporaries(const TempDir& dir) {
  for (const std::string& f : dir.Files()) {
    if (f.find(".tmp.") != std::string::npos) return false;
  }
  return true;
}

TEST(Save, RefusesToOverwriteInputUnlessInPlace) {
  TempDir dir;
  WriteFile(dir / "m.onnx", Bytes(SmallModel()));
  absl::StatusOr<Model> m = LoadModel(dir / "m.onnx");
  ASSERT_TRUE(m.ok());
  const std::string before = ReadAll(dir / "m.onnx");
  fs::create_directories(dir / "a");
  fs::create_symlink(dir / "m.onnx", dir / "link.onnx");
  for (const std::string& out : {dir / "m.onnx", dir / "a/../m.onnx", dir / "link.onnx"}) {
    absl::Status s = SaveModel(*m, out);
    EXPECT_THAT(std::string(s.message()), HasSubstr("is the input model")) << out;
    EXPECT_EQ(std::string(s.message()).rfind(out, 0), 0u);
  }
  fs::create_hard_link(dir / "m.onnx", dir / "hard.onnx");
  EXPECT_THAT(std::string(SaveModel(*m, dir / "hard.onnx").message()),
              HasSubstr("is the input model"));
  EXPECT_EQ(ReadAll(dir / "m.onnx"), before);
  SaveOptions in_place;
  in_place.in_place = true;
  EXPECT_TRUE(SaveModel(*m, dir / "m.onnx", in_place).ok());
  EXPECT_TRUE(NoTemporaries(dir));
}

TEST(Save, FailuresLeaveNothingBehind) {
  TempDir dir;
  Model m = SmallModelIn(dir);
  EXPECT_THAT(std::string(SaveModel(m, dir / "missing/out.onnx").message()),
              HasSubstr("does not exist"));
  fs::create_directories(dir / "adir");
  EXPECT_THAT(std::string(SaveModel(m, dir / "adir").message()), HasSubstr("is a directory"));
  WriteFile(dir / "afile", "x");
  EXPECT_FALSE(SaveModel(m, dir / "afile/out.onnx").ok());
  // An output data file that is a symlink is never written through.
  WriteFile(dir / "victim", "keep");
  fs::create_symlink(dir / "victim", dir / "o.onnx.data");
  SaveOptions ext;
  ext.external_data = true;
  ext.external_threshold_bytes = 1;
  EXPECT_THAT(std::string(SaveModel(m, dir / "o.onnx", ext).message()), HasSubstr("symlink"));
  EXPECT_EQ(ReadAll(dir / "victim"), "keep");
  EXPECT_FALSE(fs::exists(dir / "o.onnx"));
  EXPECT_TRUE(NoTemporaries(dir));
  if (::geteuid() != 0) {
    fs::create_directories(dir / "ro");
    ::chmod((dir / "ro").c_str(), 0500);
    EXPECT_EQ(SaveModel(m, dir / "ro/out.onnx").code(), absl::StatusCode::kPermissionDenied);
  }
}

TEST(Save, ReplacesExistingOutputAtomically) {
  TempDir dir;
  Model m = SmallModelIn(dir);
  WriteFile(dir / "out.onnx", "old");
  ASSERT_TRUE(SaveModel(m, dir / "out.onnx").ok());
  EXPECT_EQ(ReadAll(dir / "out.onnx"), Bytes(m.proto));
  EXPECT_EQ(dir.Files(), std::vector<std::string>{"out.onnx"});
}

TEST(Checks, CheckerAcceptsValidAndRejectsInvalid) {
  Model m;
  m.proto = SmallModel();
  EXPECT_TRUE(CheckModel(m, /*full=*/true).ok());
  m.proto.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  absl::Status s = CheckModel(m, /*full=*/false);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(std::string(s.message()).find('\n'), std::string::npos);
}

// A report staged piece by piece (check --json, issue 46 item 4): the file is the pieces in
// order and appears only at Commit; a producer that fails leaves no file and no temporary.
TEST(StagedOutput, StreamedPiecesAppearOnlyAtCommit) {
  TempDir dir;
  absl::StatusOr<StagedOutputFiles> staged =
      StagedOutputFiles::StageStreamed(dir / "r.json", InputFiles(), [](StagedOutputFiles::Sink sink) {
        for (const char* piece : {"{", "\"a\": 1", "}\n"}) {
          if (absl::Status s = sink(piece); !s.ok()) return s;
        }
        return absl::OkStatus();
      });
  ASSERT_TRUE(staged.ok()) << staged.status();
  EXPECT_FALSE(fs::exists(dir / "r.json"));
  ASSERT_TRUE(staged->Commit().ok());
  EXPECT_EQ(ReadAll(dir / "r.json"), "{\"a\": 1}\n");

  absl::StatusOr<StagedOutputFiles> failed =
      StagedOutputFiles::StageStreamed(dir / "f.json", InputFiles(), [](StagedOutputFiles::Sink sink) {
        (void)sink("half a report");
        return absl::DataLossError("the writer stopped");
      });
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(failed.status().message(), HasSubstr("f.json: cannot write: the writer stopped"));
  EXPECT_EQ(dir.Files(), std::vector<std::string>{"r.json"});
}

}  // namespace
}  // namespace onnx_bcast::proto
