// The hostile-input catalogue: one table of bad inputs run through the onnx-bcast binary, the
// contract users see in CI. Every row builds its files in a fresh directory, runs one command,
// and asserts the exit code, a one-line message containing a given text, and that nothing in
// the directory changed (no output, no temporary, no file touched outside the model's folder).
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "tests/support/cli_process.h"
#include "tests/support/sanitizer.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------------------------
// Running the CLI and watching the directory.

using Result = test_support::CliResult;
using test_support::ReadAll;

// The binary under test: BCAST_HOSTILE_CLI names another build's onnx-bcast (to show that a
// row fails without its fix), else the one built with this test.
std::string Cli() {
  const char* other = std::getenv("BCAST_HOSTILE_CLI");
  return other != nullptr && *other != '\0' ? other : BCAST_CLI;
}

// Runs the CLI with `args` (no shell); stdout and stderr go to files outside the watched tree.
// With `address_space_mb` > 0 the child runs under that RLIMIT_AS (ulimit -v), as CI runners
// and containers often do.
Result RunCli(const std::vector<std::string>& args, const std::string& scratch,
              int64_t address_space_mb = 0) {
  if (address_space_mb <= 0) return test_support::RunCliIn(Cli(), args, scratch);
  const std::string out_path = scratch + "/stdout", err_path = scratch + "/stderr";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const rlim_t bytes = static_cast<rlim_t>(address_space_mb) << 20;
    const struct rlimit limit = {bytes, bytes};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(125);
    if (std::freopen(out_path.c_str(), "w", stdout) == nullptr ||
        std::freopen(err_path.c_str(), "w", stderr) == nullptr) {
      ::_exit(126);
    }
    std::string program = Cli();
    std::vector<std::string> copy = args;
    std::vector<char*> argv = {program.data()};
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  Result r;
  r.code = test_support::WaitExitCode(pid);
  r.out = ReadAll(out_path);
  r.err = ReadAll(err_path);
  return r;
}

// ASan reserves terabytes of shadow address space: address-space caps cannot apply to it.
using test_support::kAddressSanitizer;

// Everything observable about a tree without following links: path, kind, size, mode,
// modification time, link count and link target.
std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> entries;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string path = it->path().string();
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    std::string what = absl::StrCat(st.st_mode, " ", st.st_size, " ", st.st_nlink, " ",
                                    st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec);
    if (S_ISLNK(st.st_mode)) absl::StrAppend(&what, " -> ", fs::read_symlink(path).string());
    // A directory's mtime changes when a temporary is created and removed in it; sizes and
    // listings of its entries are compared instead.
    if (S_ISDIR(st.st_mode)) what = absl::StrCat(st.st_mode);
    entries[path.substr(root.size())] = what;
  }
  return entries;
}

// ---------------------------------------------------------------------------------------------
// The directory a row works in: in/ holds the model, out/ receives outputs, outside/ stands for
// the rest of the machine.

class Env {
 public:
  Env() {
    std::string pattern = (fs::temp_directory_path() / "bcast_hostile_XXXXXX").string();
    base_ = ::mkdtemp(pattern.data());
    root_ = base_ + "/tree";
    for (const char* d : {"/in", "/out", "/outside"}) fs::create_directories(root_ + d);
    fs::create_directories(base_ + "/scratch");
  }
  ~Env() {
    for (const std::string& path : immutable_) SetImmutable(path, false);
    std::error_code ec;
    fs::permissions(root_ + "/out", fs::perms::owner_all, ec);
    fs::remove_all(base_, ec);
  }
  const std::string& root() const { return root_; }
  std::string in(const std::string& name = "") const { return root_ + "/in/" + name; }
  std::string out(const std::string& name = "") const { return root_ + "/out/" + name; }
  std::string outside(const std::string& name = "") const { return root_ + "/outside/" + name; }
  std::string scratch() const { return base_ + "/scratch"; }
  // `text` with "{in}", "{out}" and "{outside}" replaced by those directories.
  std::string Expand(const std::string& text) const {
    return absl::StrReplaceAll(text, {{"{in}", in()}, {"{out}", out()}, {"{outside}", outside()}});
  }

  // Makes `dir` unwritable even for root (CI runs as root, which ignores mode bits): mode 0555,
  // plus the immutable attribute when we may set it. False when neither holds.
  bool MakeReadOnly(const std::string& dir) {
    ::chmod(dir.c_str(), 0555);
    if (SetImmutable(dir, true)) immutable_.push_back(dir);
    const std::string probe = dir + "/.probe";
    const int fd = ::open(probe.c_str(), O_CREAT | O_WRONLY, 0644);
    if (fd < 0) return true;
    ::close(fd);
    ::unlink(probe.c_str());
    return false;
  }

 private:
  static bool SetImmutable(const std::string& path, bool on) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd < 0) return false;
    int flags = 0;
    bool ok = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
    if (ok) {
      flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
      ok = ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
    }
    ::close(fd);
    return ok;
  }

  std::string base_, root_;
  std::vector<std::string> immutable_;
};

// ---------------------------------------------------------------------------------------------
// Building models.

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

onnx::ModelProto Text(const char* text) {
  absl::StatusOr<proto::Model> m = proto::ParseModelText(text);
  if (!m.ok()) {
    ADD_FAILURE() << m.status();
    return {};
  }
  return m->proto;
}

std::string Bytes(const onnx::ModelProto& m) { return proto::SerializeModel(m).value(); }

const char kAdd[] = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,3] x) => (float[2,3] y) {
    w = Constant<value = float[1,3] {1, 2, 3}>()
    y = Add(x, w)
  })";

// Add with an initializer `w` [2,3] that a row then corrupts.
onnx::ModelProto WithInitializer(const std::function<void(onnx::TensorProto*)>& edit) {
  onnx::ModelProto m = Text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y) <float[2,3] w = {1, 2, 3, 4, 5, 6}> { y = Add(x, w) })");
  edit(m.mutable_graph()->mutable_initializer(0));
  return m;
}

// Add whose initializer `w` (6 floats) lives in external data described by the given entries.
onnx::ModelProto External(const std::string& location, const std::string& offset = "",
                          const std::string& length = "") {
  return WithInitializer([&](onnx::TensorProto* t) {
    t->clear_float_data();
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* key, const std::string& value) {
      auto* e = t->add_external_data();
      e->set_key(key);
      e->set_value(value);
    };
    add("location", location);
    if (!offset.empty()) add("offset", offset);
    if (!length.empty()) add("length", length);
  });
}

std::string SixFloats() { return std::string(24, '\0'); }

// If nodes nested `depth` deep through their then branches (else branches are leaves, so the
// model stays linear in `depth`).
onnx::ModelProto NestedIfs(int depth) {
  onnx::ModelProto m = Text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c) => (float[1] y) { y = Constant<value = float[1] {1}>() })");
  onnx::GraphProto leaf = m.graph();
  leaf.clear_input();
  onnx::GraphProto inner = leaf;
  for (int i = 0; i < depth; ++i) {
    onnx::GraphProto outer;
    outer.set_name(absl::StrCat("level", i));
    *outer.add_output() = m.graph().output(0);
    onnx::NodeProto* node = outer.add_node();
    node->set_op_type("If");
    node->add_input("c");
    node->add_output("y");
    for (const char* branch : {"then_branch", "else_branch"}) {
      onnx::AttributeProto* a = node->add_attribute();
      a->set_name(branch);
      a->set_type(onnx::AttributeProto::GRAPH);
      *a->mutable_g() = branch[0] == 't' ? inner : leaf;
    }
    inner = std::move(outer);
  }
  *m.mutable_graph()->mutable_node() = inner.node();
  return m;
}

// A model of `count` nodes in a chain of Identity.
onnx::ModelProto Chain(int count) {
  onnx::ModelProto m = Text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = Identity(x) })");
  m.mutable_graph()->clear_node();
  for (int i = 0; i < count; ++i) {
    onnx::NodeProto* n = m.mutable_graph()->add_node();
    n->set_op_type("Identity");
    n->add_input(i == 0 ? "x" : absl::StrCat("t", i));
    n->add_output(i + 1 == count ? "y" : absl::StrCat("t", i + 1));
  }
  return m;
}

std::string Pseudorandom(size_t n, uint32_t seed) {
  std::string bytes(n, '\0');
  for (char& c : bytes) {
    seed = seed * 1103515245 + 12345;
    c = static_cast<char>(seed >> 16);
  }
  return bytes;
}

// A run-time allocation bomb: a tiny model whose one node asks for a huge output.
onnx::ModelProto Bomb(const char* body) {
  const std::string text = absl::StrCat(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[] y) {)",
                                        body, "}");
  return Text(text.c_str());
}

// ---------------------------------------------------------------------------------------------
// The catalogue.

enum class Stream { kStderr, kStdout };

// stderr of a successful command without run's notes (the values random inputs bind, warnings
// about empty outputs or an unknown --dim): anything else on success is a fault.
std::string WithoutRunNotes(const std::string& err) {
  std::string rest;
  for (absl::string_view line : absl::StrSplit(err, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "run: random inputs with ") ||
        absl::StrContains(line, ": warning: ")) {
      continue;
    }
    absl::StrAppend(&rest, line, "\n");
  }
  return rest;
}

struct Row {
  std::string name;
  std::function<void(Env&)> build;
  // "{in}", "{out}", "{outside}" expand to the row's directories (with a trailing slash).
  std::vector<std::string> args;
  int code;
  std::string message;
  // Where the one-line message appears: stderr for refusals; stdout for check's verdicts.
  Stream stream = Stream::kStderr;
  // When set ("{in}" etc. expanded), the one line on stderr starts with it: the file at fault.
  std::string starts = "";
  // RLIMIT_AS for the child in MiB (0: none); such rows are skipped under ASan.
  int64_t address_space_mb = 0;
};

std::function<void(Env&)> Model(std::function<onnx::ModelProto()> make) {
  return [make](Env& env) { WriteFile(env.in("m.onnx"), Bytes(make())); };
}
std::function<void(Env&)> Raw(std::function<std::string()> make) {
  return [make](Env& env) { WriteFile(env.in("m.onnx"), make()); };
}
std::function<void(Env&)> ExternalModel(std::function<onnx::ModelProto()> make,
                                        std::function<void(Env&)> files) {
  return [make, files](Env& env) {
    WriteFile(env.in("m.onnx"), Bytes(make()));
    files(env);
  };
}

const std::vector<std::string> kOpt = {"opt", "--passes", "none", "{in}m.onnx", "-o", "{out}o.onnx"};
const std::vector<std::string> kCheck = {"check", "{in}m.onnx"};
const std::vector<std::string> kRun = {"run", "{in}m.onnx", "--output-dir", "{out}res"};
const std::vector<std::string> kUncapped = {"run",        "{in}m.onnx",   "--output-dir",
                                            "{out}res",   "--max-memory", "1099511627776"};

std::vector<std::string> With(std::vector<std::string> args,
                              std::initializer_list<std::string> more) {
  // A row that names its own target replaces kOpt's plain save ("--passes none").
  for (const std::string& m : more) {
    if (m != "--target" && m != "--passes" && m != "--target-file") continue;
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--passes" && args[i + 1] == "none") {
        args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
                   args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
        break;
      }
    }
  }
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::vector<Row> MalformedProtobuf() {
  const std::string good = Bytes(WithInitializer([](onnx::TensorProto*) {}));
  onnx::ModelProto no_opset = Text(kAdd);
  no_opset.clear_opset_import();
  return {
      {"Empty", Raw([] { return std::string(); }), kOpt, 2, "empty file"},
      {"RandomBytes", Raw([] { return Pseudorandom(4096, 7); }), kOpt, 2, "not a valid ONNX model"},
      {"RandomBytesCheck", Raw([] { return Pseudorandom(100000, 8); }), kCheck, 2,
       "not a valid ONNX model"},
      {"TruncatedMidField", Raw([good] { return good.substr(0, good.size() - 5); }), kOpt, 2,
       "not a valid ONNX model"},
      // Everything up to the graph: the ir_version and opset fields come after it in the
      // serialized order, so what is left parses and is caught by validation.
      {"TruncatedAtFieldBoundary", Raw([no_opset] { return Bytes(no_opset); }), kOpt, 2,
       "imports no opset"},
      {"ConcatenatedModels", Raw([good] { return good + good; }), kOpt, 2, "imported twice"},
      {"NestingPastDefaultLimit", Model([] { return NestedIfs(40); }), kCheck, 2,
       "nested deeper than the limit"},
      {"NestingPastGivenLimit", Model([] { return NestedIfs(8); }),
       With(kRun, {"--max-nesting", "16"}), 2, "nested deeper than the limit of 16"},
      {"FileLargerThanLimit", Model([] { return Chain(10); }),
       With(kOpt, {"--max-file-bytes", "64"}), 2, "more than the limit of 64"},
      {"MoreNodesThanLimit", Model([] { return Chain(50); }), With(kOpt, {"--max-nodes", "49"}),
       2, "more than the limit of 49 nodes"},
      {"ManyEmptyNodes",  // Debian protobuf: 10 MB of empty nodes costs about 1 GB parsed
       Raw([] {
         std::string bytes = Bytes(Chain(1));
         // graph (field 7) holding 5M empty nodes (field 1, length 0): "\x0a\x00" each.
         std::string nodes;
         for (int i = 0; i < 5'000'000; ++i) nodes += std::string("\x0a\x00", 2);
         std::string len;
         for (uint64_t v = nodes.size(); ; v >>= 7) {
           if (v < 0x80) { len += static_cast<char>(v); break; }
           len += static_cast<char>((v & 0x7f) | 0x80);
         }
         return bytes + "\x3a" + len + nodes;
       }),
       With(kOpt, {"--max-file-bytes", "1000000"}), 2, "more than the limit of 1000000"},
      {"ModelIsADirectory", [](Env& env) { fs::create_directories(env.in("m.onnx")); }, kOpt, 2,
       "is a directory"},
      {"ModelIsAFifo", [](Env& env) { ::mkfifo(env.in("m.onnx").c_str(), 0644); }, kOpt, 2,
       "not a regular file"},
      {"ModelMissing", [](Env&) {}, kOpt, 2, "no such file"},
      {"TextFormGarbage", [](Env& env) { WriteFile(env.in("m.onnxtxt"), "<ir_version: 8> g ((("); },
       {"opt", "--passes", "none", "{in}m.onnxtxt", "-o", "{out}o.onnx"}, 2, "m.onnxtxt"},
  };
}

// Relu whose input and output declare `dims` (numbers or symbols); set after parsing, which
// validates.
onnx::ModelProto DeclaredDims(const std::vector<std::string>& dims) {
  onnx::ModelProto m = Text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1] x) => (float[1] y) { y = Relu(x) })");
  for (onnx::ValueInfoProto* v :
       {m.mutable_graph()->mutable_input(0), m.mutable_graph()->mutable_output(0)}) {
    onnx::TensorShapeProto* shape = v->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (const std::string& d : dims) {
      int64_t n = 0;
      if (absl::SimpleAtoi(d, &n)) {
        shape->add_dim()->set_dim_value(n);
      } else {
        shape->add_dim()->set_dim_param(d);
      }
    }
  }
  return m;
}

std::vector<Row> HostileSizes() {
  return {
      {"NegativeDimInInitializer",
       Model([] { return WithInitializer([](onnx::TensorProto* t) { t->set_dims(0, -2); }); }),
       kOpt, 2, "negative dim -2"},
      {"NegativeDimInInputType", Model([] {
         onnx::ModelProto m = Text(kAdd);
         m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()
             ->mutable_shape()->mutable_dim(0)->set_dim_value(-5);
         return m;
       }),
       kCheck, 2, "negative dim -5"},
      {"DimsProductOverflowsInt64", Model([] {
         return WithInitializer([](onnx::TensorProto* t) {
           t->set_dims(0, int64_t{1} << 40);
           t->set_dims(1, int64_t{1} << 40);
         });
       }),
       kOpt, 2, "more than the limit"},
      {"RawPayloadShorterThanDims", Model([] {
         return WithInitializer([](onnx::TensorProto* t) {
           t->clear_float_data();
           t->set_raw_data(std::string(12, '\0'));
         });
       }),
       kOpt, 2, "payload has 12 bytes, dims need 24"},
      {"TypedPayloadLongerThanDims", Model([] {
         return WithInitializer([](onnx::TensorProto* t) { t->add_float_data(7); });
       }),
       kRun, 2, "payload has 7 values, dims need 6"},
      {"HugeDeclaredInitializerNoData", Model([] {
         return WithInitializer([](onnx::TensorProto* t) {
           t->clear_float_data();
           t->set_dims(0, 1000000);
           t->set_dims(1, 1000000);
         });
       }),
       kOpt, 2, "more than the limit"},
      {"HugeConstantAttributeNoData", Model([] {
         onnx::ModelProto m = Text(kAdd);
         onnx::TensorProto* t = m.mutable_graph()->mutable_node(0)->mutable_attribute(0)
                                    ->mutable_t();
         t->clear_float_data();
         t->set_dims(0, 3000000);
         t->set_dims(1, 3000000);
         return m;
       }),
       kCheck, 2, "more than the limit"},
      {"TensorPastGivenElementLimit", Model([] { return WithInitializer([](onnx::TensorProto*) {}); }),
       With(kOpt, {"--max-tensor-elements", "5"}), 2, "more than the limit of 5"},
      // Declared input shapes cost nothing to check; `run` must refuse to make them up.
      {"HugeDeclaredInputRun", Model([] {
         return Text(R"(
           <ir_version: 8, opset_import: ["" : 17]>
           g (float[100000,100000,100000] x) => (float[100000,100000,100000] y) { y = Relu(x) })");
       }),
       kRun, 2, "input 'x' [100000,100000,100000] has 1000000000000000 elements"},
      {"HugeDeclaredInputPastGivenLimit", Model([] {
         return Text(R"(
           <ir_version: 8, opset_import: ["" : 17]>
           g (float[N,1000] x) => (float[N,1000] y) { y = Relu(x) })");
       }),
       With(kRun, {"--dim", "N=1000", "--max-tensor-elements", "999999"}), 2,
       "more than the limit of 999999"},
      {"InputDimsOverflowInt64Run", Model([] { return DeclaredDims({"4294967296", "4294967296", "4"}); }),
       kRun, 2, "input 'x'"},
      // Issue 26: check accepted this model (exit 0, computing with a wrapped element count)
      // while run refused it; load validation now refuses it for every command.
      {"InputDimsOverflowInt64Check",
       Model([] { return DeclaredDims({"4294967296", "4294967296", "4"}); }),
       kCheck, 2, "input 'x' has dims [4294967296,4294967296,4] whose product overflows int64",
       Stream::kStderr, "{in}m.onnx: "},
      {"InputDimsOverflowInt64Opt",
       Model([] { return DeclaredDims({"N", "4294967296", "4294967296"}); }),
       kOpt, 2, "input 'x' has dims [N,4294967296,4294967296] whose product overflows int64"},
  };
}

std::vector<Row> HostileExternalData() {
  auto six = [](const char* name) {
    return [name](Env& env) { WriteFile(env.in(name), SixFloats()); };
  };
  // w.bin holds the six floats; the initializer's external data says `offset` and `length`.
  auto six_at = [six](std::string offset, std::string length) {
    return ExternalModel([offset, length] { return External("w.bin", offset, length); },
                         six("w.bin"));
  };
  // The initializer's data in the file at `location`; `files` lays the files out.
  auto at = [](std::string location, std::function<void(Env&)> files) {
    return ExternalModel([location] { return External(location); }, std::move(files));
  };
  // The six floats in outside/w.bin, which `reach` makes reachable from in/.
  auto outside = [](std::function<void(Env&)> reach) {
    return [reach](Env& env) {
      WriteFile(env.outside("w.bin"), SixFloats());
      reach(env);
    };
  };
  return {
      {"ParentDirectory", at("../outside/w.bin", outside([](Env&) {})), kOpt, 2, "w.bin"},
      {"DotDotInsidePath",
       at("a/../../outside/w.bin", outside([](Env& env) { fs::create_directories(env.in("a")); })),
       kOpt, 2, "a/../../outside/w.bin"},
      {"AbsolutePath", at("/etc/passwd", [](Env&) {}), kOpt, 2, "/etc/passwd"},
      {"SymlinkToOutside", at("w.bin", outside([](Env& env) {
                                fs::create_symlink(env.outside("w.bin"), env.in("w.bin"));
                              })),
       kOpt, 2, "w.bin"},
      {"SymlinkedDirectoryToOutside", at("d/w.bin", outside([](Env& env) {
                                           fs::create_directory_symlink(env.outside(), env.in("d"));
                                         })),
       kRun, 2, "d/w.bin"},
      {"HardLinkToOutside", at("w.bin", outside([](Env& env) {
                                 fs::create_hard_link(env.outside("w.bin"), env.in("w.bin"));
                               })),
       kOpt, 2, "w.bin"},
      {"LocationIsADirectory",
       at("w.bin", [](Env& env) { fs::create_directories(env.in("w.bin")); }), kOpt, 2, "w.bin"},
      {"LocationIsAFifo", at("w.bin", [](Env& env) { ::mkfifo(env.in("w.bin").c_str(), 0644); }),
       kRun, 2, "w.bin"},
      {"LocationMissing", at("w.bin", [](Env&) {}), kOpt, 2, "w.bin"},
      {"LocationEmpty", at("", [](Env&) {}), kOpt, 2, "location"},
      {"OffsetPastEnd", six_at("25", "24"), kOpt, 2, "w.bin"},
      {"OffsetPlusLengthPastEnd", six_at("8", "24"), kRun, 2, "w.bin"},
      {"OffsetPlusLengthOverflows", six_at("9223372036854775800", "24"), kOpt, 2, "w.bin"},
      {"LengthTooLargeForInt64", six_at("0", "99999999999999999999"), kOpt, 2,
       "not a non-negative decimal"},
      {"LengthHex", six_at("0", "0x18"), kOpt, 2, "not a non-negative decimal"},
      {"LengthSigned", six_at("0", "+24"), kOpt, 2, "not a non-negative decimal"},
      {"LengthTrailingSpace", six_at("0", "24 "), kOpt, 2, "not a non-negative decimal"},
      {"OffsetNegative", six_at("-1", "24"), kOpt, 2, "not a non-negative decimal"},
      {"LengthDisagreesWithDims", six_at("0", "20"), kRun, 2,
       "external data has 20 bytes, dims need 24"},
  };
}

std::vector<Row> GraphFaults() {
  const char* cycle = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { a = Add(x, b)  b = Relu(a)  y = Identity(b) })";
  const char* undefined = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = Add(x, nowhere) })";
  const char* duplicate = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = Relu(x)  y = Neg(x) })";
  const char* unproduced = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y, float[2] z) { y = Relu(x) })";
  const char* recursive = R"(
    <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
    g (float[2] x) => (float[2] y) { y = local.F(x) }
    <domain: "local", opset_import: ["" : 17, "local" : 1]>
    F (a) => (b) { b = local.F(a) })";
  const char* mutual = R"(
    <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
    g (float[2] x) => (float[2] y) { y = local.F(x) }
    <domain: "local", opset_import: ["" : 17, "local" : 1]>
    F (a) => (b) { b = local.G(a) }
    <domain: "local", opset_import: ["" : 17, "local" : 1]>
    G (a) => (b) { t = Relu(a)  b = local.F(t) })";
  const char* conv_transpose_ranks = R"(
    <ir_version: 6, opset_import: ["" : 11]>
    g (float[1,3] X, float[1,2,3] W) => (float[1] Y) { Y = ConvTranspose(X, W) })";
  const char* gemm_rank1 = R"(
    <ir_version: 3, opset_import: ["" : 6]>
    g (float[2,3] A, float[4] B, float[4] C) => (float[2,4] Y) { Y = Gemm(A, B, C) })";
  const char* conv_zero_stride = R"(
    <ir_version: 7, opset_import: ["" : 11]>
    g (float[1,1,6,6] X, float[1,1,3,3] W) => (float[1,1,4,6] Y) {
      Y = Conv <strides = [0, 1]> (X, W)
    })";
  const char* layer_norm_shapeless = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float X, float[5] W, float[5] B) => (float[2,5] Y, float M, float I) {
      Y, M, I = LayerNormalization(X, W, B)
    })";
  // An opset-6 model the version converter must handle (Dropout changes at 7) holding an Add
  // without inputs.
  const char* converter_bad_node = R"(
    <ir_version: 3, opset_import: ["" : 6]>
    g (float[1] x) => (float[1] z) { y = Add()  z = Dropout(x) })";
  // Found by fuzz_run: Tile to a zero-size shape whose other dims multiply past int64 (signed
  // overflow computing dense strides).
  const char* tile_zero_huge = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,1,1,2] x) => (float[A,B,C,D] y) {
      r = Constant <value = int64[4] {562949953421313, 0, 720575940379279363, 134217732}> ()
      y = Tile(x, r)
    })";
  // Found by fuzz_opt: operands or outputs a broadcasting node lacks (protobuf CHECK failure,
  // abort): a PRelu without slope, a Gemm without output.
  const char* prelu_without_slope = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y) { y = PRelu(x) })";
  // Found by fuzz_check: Conv inference took two spatial dims from a rank-4 W and read past a
  // rank-3 X (segfault).
  const char* conv_rank_mismatch = R"(
    <ir_version: 7, opset_import: ["" : 13]>
    g (float[1,3,16] X, float[8,3,3,3] W) => (float[1,8,14] Y) { Y = Conv(X, W) })";
  auto text = [](const char* t) { return Model([t] { return Text(t); }); };
  auto gemm_without_output = Model([] {
    onnx::ModelProto m = Text(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,3] a, float[3,4] b, float[4] c) => (float[2,4] y) {
        t = Gemm(a, b, c)
        y = Gemm(a, b, c)
      })");
    m.mutable_graph()->mutable_node(0)->clear_output();
    return m;
  });
  // Found by fuzz_opt: fold-constants named each attribute's node by its first output, and read
  // the output of an unnamed legacy Add that has none and an attribute the upgrade to opset 7
  // keeps (protobuf CHECK failure, abort).
  auto legacy_add_without_output = Model([] {
    onnx::ModelProto m = Text(R"(
      <ir_version: 3, opset_import: ["" : 6]>
      g (float[2,3] x, float[3] b) => (float[2,3] y) {
        t = Add <broadcast = 1, note = 1> (x, b)
        y = Relu(x)
      })");
    m.mutable_graph()->mutable_node(0)->clear_output();
    return m;
  });
  // Scan-9 with its required num_scan_inputs missing (renamed, as the fuzzer did).
  auto scan_model = [] {
    return Text(R"(
      <ir_version: 4, opset_import: ["" : 9]>
      g (float[2] init, float[3,2] x) => (float[2] y, float[3,2] z) {
        y, z = Scan <num_scan_inputs = 1, body = body (float[2] s, float[2] n) => (float[2] o,
            float[2] c) { o = Add(s, n)  c = Identity(o) }> (init, x)
      })");
  };
  auto scan_without_count = Model([scan_model] {
    onnx::ModelProto m = scan_model();
    for (auto& attr : *m.mutable_graph()->mutable_node(0)->mutable_attribute()) {
      if (attr.name() == "num_scan_inputs") attr.set_name("num_scan_inputz");
    }
    return m;
  });
  // Found by fuzz_run: a Scan-8 scan input of rank 1 has no sequence axis once the batch axis
  // is sliced off (null reference indexing its shape).
  // A Scan-8 without sequence_lens whose scan input is `x_and_z` (its declaration and the
  // scan output's, e.g. "float[1] x) => (float[1,2] y, float[1,3,2] z").
  auto scan8 = [](std::string x_and_z) {
    return Model([x_and_z] {
      const std::string text = absl::StrCat(R"(
        <ir_version: 3, opset_import: ["" : 8]>
        g (int64[1] lens, float[1,2] init, )", x_and_z, R"() {
          y, z = Scan <num_scan_inputs = 1, body = body (float[2] s, float[2] n) => (float[2] o,
              float[2] c) { o = Add(s, n)  c = Identity(o) }> (lens, init, x)
        })");
      onnx::ModelProto m = Text(text.c_str());
      m.mutable_graph()->mutable_node(0)->set_input(0, "");  // no sequence_lens
      m.mutable_graph()->mutable_input()->DeleteSubrange(0, 1);
      return m;
    });
  };
  auto scan8_rank1 = scan8("float[1] x) => (float[1,2] y, float[1,3,2] z");
  // Found by fuzz_run: Scan-8 inputs with different batch sizes (heap overflow slicing the
  // shorter one).
  auto scan8_batches = scan8("float[3,4,2] x) => (float[1,2] y, float[1,4,2] z");
  // Found by fuzz_opt: libonnx's inference read a sparse graph input's dims as a dense
  // tensor's (segfault in a Gemm taking it twice).
  auto gemm_sparse_input = Model([] {
    onnx::ModelProto m = Text(R"(
      <ir_version: 3, opset_import: ["" : 6]>
      g (float[2,3] a, float[3,4] b, float[4] c) => (float[2,4] y) { y = Gemm(a, a, c) })");
    onnx::TypeProto* t = m.mutable_graph()->mutable_input(0)->mutable_type();
    onnx::TypeProto dense = *t;
    t->mutable_sparse_tensor_type()->set_elem_type(dense.tensor_type().elem_type());
    *t->mutable_sparse_tensor_type()->mutable_shape() = dense.tensor_type().shape();
    return m;
  });
  // Found by fuzz_run: a Scan body with fewer outputs than states made the scan-output count
  // negative (std::length_error, abort).
  auto scan_empty_body = Model([scan_model] {
    onnx::ModelProto m = scan_model();
    for (auto& attr : *m.mutable_graph()->mutable_node(0)->mutable_attribute()) {
      if (attr.name() == "body") attr.mutable_g()->Clear();
    }
    return m;
  });
  return {
      {"CycleCheck", text(cycle), kCheck, 2, "cycle"},
      {"CycleRun", text(cycle), kRun, 2, "cycle"},
      {"CycleOpt", text(cycle), With(kOpt, {"--target", "none"}), 2, "cycle"},
      {"UndefinedInputCheck", text(undefined), kCheck, 2, "nowhere"},
      {"UndefinedInputRun", text(undefined), kRun, 2, "nowhere"},
      {"DuplicateOutputCheck", text(duplicate), kCheck, 2, "'y'"},
      {"DuplicateOutputRun", text(duplicate), kRun, 2, "'y'"},
      {"GraphOutputNothingProducesCheck", text(unproduced), kCheck, 2, "'z'"},
      {"GraphOutputNothingProducesRun", text(unproduced), kRun, 2, "'z'"},
      // Found by fuzz_run: an unnamed graph output made the executor throw (abort).
      {"UnnamedGraphOutputRun", Model([] {
         onnx::ModelProto m = Text(kAdd);
         m.mutable_graph()->mutable_output(0)->set_name("");
         return m;
       }),
       kRun, 2, "graph output 0 has no name"},
      // Found by fuzz_check: libonnx 1.12's ConvTranspose inference read past W's dims when X
      // has rank 2 and W rank 3 (segfault in check and opt); proto/inference_guards.cc.
      {"ConvTransposeRankMismatchCheck", text(conv_transpose_ranks), kCheck, 0, "",
       Stream::kStdout},
      {"ConvTransposeRankMismatchOpt", text(conv_transpose_ranks),
       {"opt", "{in}m.onnx", "--dry-run", "--target", "none"}, 0, "", Stream::kStdout},
      {"ConvTransposeRankMismatchRun", text(conv_transpose_ranks), kRun, 2,
       "must be [N, C, spatial...]", Stream::kStderr, "{in}m.onnx: "},
      // Found by fuzz_check: libonnx 1.12's Gemm inference read dim 1 of a rank-1 B, Scan-9's
      // dereferenced a missing num_scan_inputs (segfaults in check and opt).
      {"GemmRank1Check", text(gemm_rank1), kCheck, 0, "", Stream::kStdout},
      {"GemmRank1Opt", text(gemm_rank1),
       {"opt", "{in}m.onnx", "--dry-run", "--target", "none"}, 3, "not in its form"},
      // run's executor errors start with the model, as every other refusal does (issue 14).
      {"GemmRank1Run", text(gemm_rank1), kRun, 2, "must be 2-D", Stream::kStderr,
       "{in}m.onnx: "},
      // Found by fuzz_check: conv/pool inference divided by a zero stride (SIGFPE).
      {"ConvZeroStrideCheck", text(conv_zero_stride), kCheck, 0, "", Stream::kStdout},
      {"ConvZeroStrideOpt", text(conv_zero_stride),
       {"opt", "{in}m.onnx", "--dry-run", "--target", "none"}, 0, "", Stream::kStdout},
      {"ConvZeroStrideRun", text(conv_zero_stride), kRun, 2, "must be positive"},
      // Found by fuzz_opt: LayerNormalization-17 inference indexed a shapeless X (segfault);
      // libonnx's version converter indexed the inputs of an Add that has none (segfault), now
      // refused by the checker first.
      {"LayerNormShapelessXCheck", text(layer_norm_shapeless), kCheck, 0, "", Stream::kStdout},
      {"LayerNormShapelessXOpt", text(layer_norm_shapeless),
       {"opt", "{in}m.onnx", "--dry-run", "--target", "none"}, 0, "", Stream::kStdout},
      {"VersionConverterBadNodeOpt", text(converter_bad_node),
       {"opt", "{in}m.onnx", "-o", "{out}o.onnx", "--target", "none"}, 2, "input size 0"},
      {"TileZeroSizeHugeDimsRun", text(tile_zero_huge), {"run", "{in}m.onnx"}, 0,
       "float32[562949953421313,0,720575940379279363,268435464]", Stream::kStdout},
      {"PReluWithoutSlopeOptExplicit", text(prelu_without_slope),
       {"opt", "{in}m.onnx", "--dry-run", "--target", "explicit"}, 0, "", Stream::kStdout},
      // opt cannot prove the none target's form on these Gemms: exit 3, nothing written.
      {"GemmWithoutOutputOptNone", gemm_without_output,
       {"opt", "{in}m.onnx", "--dry-run", "--target", "none"}, 3, "not in its form"},
      {"LegacyAddWithoutOutputOptNcnn", legacy_add_without_output,
       {"opt", "{in}m.onnx", "--dry-run", "--target", "ncnn", "--no-live-probe",
        "--no-verify-engine", "-q"},
       0, "fold-constants", Stream::kStdout},
      {"ConvRankMismatchCheck", text(conv_rank_mismatch), kCheck, 0, "", Stream::kStdout},
      {"ConvRankMismatchRun", text(conv_rank_mismatch), kRun, 2, "Conv"},
      {"ScanWithoutNumScanInputsCheck", scan_without_count, kCheck, 0, "", Stream::kStdout},
      {"ScanWithoutNumScanInputsOpt", scan_without_count,
       {"opt", "{in}m.onnx", "--dry-run", "--target", "none"}, 0, "", Stream::kStdout},
      {"ScanWithoutNumScanInputsRun", scan_without_count, kRun, 2, "num_scan_inputs"},
      {"ScanEmptyBodyRun", scan_empty_body, kRun, 2, "body has 0 inputs, expected 2"},
      {"Scan8Rank1ScanInputRun", scan8_rank1, kRun, 2, "scan input 0 has no axis to scan"},
      {"GemmSparseInputCheck", gemm_sparse_input, kCheck, 0, "", Stream::kStdout},
      {"GemmSparseInputOpt", gemm_sparse_input,
       {"opt", "{in}m.onnx", "--dry-run", "--target", "none"}, 3, "not in its form"},
      {"Scan8BatchMismatchRun", scan8_batches, kRun, 2, "different batch sizes (1 and 3)"},
      {"MissingOpsetImport", Model([] {
         onnx::ModelProto m = Text(kAdd);
         m.clear_opset_import();
         return m;
       }),
       kCheck, 2, "imports no opset"},
      {"DuplicatedOpsetImport", Model([] {
         onnx::ModelProto m = Text(kAdd);
         auto* o = m.add_opset_import();
         o->set_domain("ai.onnx");
         o->set_version(13);
         return m;
       }),
       kRun, 2, "imported twice"},
      {"RecursiveFunctionCheck", text(recursive), kCheck, 2, "recursive"},
      {"RecursiveFunctionRun", text(recursive), kRun, 2, "recursive"},
      {"RecursiveFunctionOpt", text(recursive), With(kOpt, {"--target", "none"}), 2,
       "recursive"},
      {"MutuallyRecursiveFunctionsRun", text(mutual), kRun, 2, "recursive"},
      // Issue 14 group 5: functions nested past the analysis's depth limit (16) are reported
      // (exit 3, naming the call), never skipped with "0 broadcasting nodes".
      {"FunctionsNestedTooDeepCheck", Model([] {
         // F0 calls F1 ... F17 calls nothing: no recursion, 18 levels.
         std::string t = R"(<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
           g (float[2] x, float[3] z) => (float[2] y) { y = local.F0(x, z) })";
         for (int i = 0; i < 18; ++i) {
           absl::StrAppend(&t, "\n<domain: \"local\", opset_import: [\"\" : 17, \"local\" : 1]>",
                           "\nF", i, " (a, b) => (r) { r = ",
                           i < 17 ? absl::StrCat("local.F", i + 1, "(a, b)") : "Add(a, b)", " }");
         }
         return Text(t.c_str());
       }),
       With(kCheck, {"--strict"}), 3,
       "nest deeper than 16 calls: node 'F16#0' calls function local.F16"},
      {"NoGraph", Model([] {
         onnx::ModelProto m = Text(kAdd);
         m.clear_graph();
         return m;
       }),
       kOpt, 2, "no graph"},
  };
}

std::vector<Row> BroadcastFaults() {
  auto text = [](const char* t) { return Model([t] { return Text(t); }); };
  const char* incompatible = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] a, float[4] b) => (float[2,3] y) { y = Add(a, b) })";
  const char* rank12 = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,1,1,1,1,1,1,1,1,1,1,3] a, float[2,3] b) => (float[2,1,1,1,1,1,1,1,1,1,2,3] y) {
      y = Add(a, b)
    })";
  const char* rank0 = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float a, float[1] b) => (float[1] y) { y = Mul(a, b) })";
  const char* zero_ok = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[0,3] a, float[1,3] b) => (float[0,3] y) { y = Add(a, b) })";
  const char* zero_bad = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[0,3] a, float[2,3] b) => (float[0,3] y) { y = Add(a, b) })";
  return {
      {"IncompatibleCheck", text(incompatible), kCheck, 1, "[2,3]", Stream::kStdout},
      {"IncompatibleRun", text(incompatible), kRun, 2, "[2,3]"},
      {"IncompatibleOpt", text(incompatible), With(kOpt, {"--target", "none"}), 2, "[4]"},
      {"ZeroVersusTwoCheck", text(zero_bad), kCheck, 1, "[0,3]", Stream::kStdout},
      {"ZeroVersusTwoRun", text(zero_bad), kRun, 2, "[0,3]"},
      // Valid edge cases: accepted everywhere (the write goes to out/res, checked below).
      {"Rank12Check", text(rank12), kCheck, 0, "", Stream::kStdout},
      {"Rank12Run", text(rank12), {"run", "{in}m.onnx"}, 0, "[2,1,1,1,1,1,1,1,1,1,2,3]",
       Stream::kStdout},
      {"Rank0VersusOneRun", text(rank0), {"run", "{in}m.onnx"}, 0, "[1]", Stream::kStdout},
      {"ZeroSizeRun", text(zero_ok), {"run", "{in}m.onnx"}, 0, "[0,3]", Stream::kStdout},
  };
}

std::vector<Row> IoFaults() {
  auto good = [](Env& env) { WriteFile(env.in("m.onnx"), Bytes(Text(kAdd))); };
  // Reshape to a run-time shape: no target can prove the Add's form (opt exits 3).
  auto unknown_rank = [](Env& env) {
    WriteFile(env.in("m.onnx"), Bytes(Text(R"(
      <ir_version: 8, opset_import: ["" : 15]>
      g (float[N,20,120] x, int64[K] s, float[120] b) => (float[N,20,120] y) {
        r = Reshape(x, s)
        y = Add(r, b)
      })")));
  };
  return {
      {"OutputDirectoryMissing", good, {"opt", "--passes", "none", "{in}m.onnx", "-o", "{out}nope/o.onnx"}, 4,
       "does not exist"},
      {"OutputDirectoryReadOnly",
       [good](Env& env) {
         good(env);
         if (!env.MakeReadOnly(env.out())) GTEST_SKIP() << "cannot make a read-only directory";
       },
       kOpt, 4, "o.onnx"},
      {"OutputDirectoryInSysfs", good, {"opt", "--passes", "none", "{in}m.onnx", "-o", "/sys/kernel/o.onnx"}, 4,
       "/sys/kernel/o.onnx"},
      {"OutputIsADirectory", [good](Env& env) {
         good(env);
         fs::create_directories(env.out("o.onnx"));
       },
       kOpt, 4, "is a directory"},
      {"OutputIsInputThroughSymlink", [good](Env& env) {
         good(env);
         fs::create_symlink(env.in("m.onnx"), env.out("o.onnx"));
       },
       kOpt, 4, "is the input model"},
      {"OutputIsInputThroughDotDot", good, {"opt", "--passes", "none", "{in}m.onnx", "-o", "{out}../in/m.onnx"}, 4,
       "is the input model"},
      {"OutputIsInputThroughHardLink", [good](Env& env) {
         good(env);
         fs::create_hard_link(env.in("m.onnx"), env.out("o.onnx"));
       },
       kOpt, 4, "is the input model"},
      {"OutputIsASymlinkElsewhere", [good](Env& env) {
         good(env);
         WriteFile(env.outside("victim"), "precious");
         fs::create_symlink(env.outside("victim"), env.out("o.onnx"));
       },
       kOpt, 4, "symlink"},
      {"OutputDataFileIsASymlink", [good](Env& env) {
         WriteFile(env.in("m.onnx"), Bytes(WithInitializer([](onnx::TensorProto* t) {
                     for (int i = 0; i < 600; ++i) t->add_float_data(0);
                     t->set_dims(0, 202);
                   })));
         WriteFile(env.outside("victim"), "precious");
         fs::create_symlink(env.outside("victim"), env.out("o.onnx.data"));
       },
       With(kOpt, {"--external-data"}), 4, "symlink"},
      {"CheckAnnotateOutputMissingDirectory", good,
       {"check", "{in}m.onnx", "--annotate", "-o", "{out}nope/o.onnx"}, 4, "does not exist"},
      {"CheckJsonIntoMissingDirectory", good,
       {"check", "{in}m.onnx", "--json", "{out}nope/r.json"}, 4, "r.json"},
      {"OptReportIntoMissingDirectory", good,
       With(kOpt, {"--report", "{out}nope/r.json", "--target", "none"}), 4, "r.json"},
      {"RunOutputDirIsAFile", [good](Env& env) {
         good(env);
         WriteFile(env.out("res"), "a file");
       },
       kRun, 4, "res"},
      // Issue 26: a side output is committed only once the main output is. Before, the report
      // (or JSON) was written first and stayed behind when the model could not be saved or opt
      // then failed.
      {"OptReportNotLeftWhenModelCannotBeSaved", good,
       {"opt", "{in}m.onnx", "-o", "{out}missing/o.onnx", "--report", "{out}r.json"}, 4,
       "does not exist"},
      {"CheckJsonNotLeftWhenAnnotateCannotBeSaved", good,
       {"check", "{in}m.onnx", "--json", "{out}r.json", "--annotate", "-o", "{out}nope/o.onnx"}, 4,
       "does not exist"},
      // A target not met is a refusal whose reasons a CI job reads from the report (issue 44
      // item 1): the report is then the one output, written on purpose (round_two_test's
      // OptWritesItsReportWhenTheTargetIsNotMet); the model never is.
      {"OptModelNotWrittenWhenTargetNotMet", unknown_rank,
       {"opt", "{in}m.onnx", "-o", "{out}o.onnx", "--target", "explicit"}, 3,
       "target explicit not met"},
  };
}

// A Loop of INT64_MAX trips whose body emits a [1000000] float scan output (4 MB) per trip.
const char kLoopScanBomb[] = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2] x) => (float[N,1000000] y) {
    m = Constant<value = int64 {9223372036854775807}>()
    c = Constant<value = bool {1}>()
    y = Loop<body = body (int64 i, bool ci) => (bool co, float[1000000] s) {
      co = Identity(ci)
      shp = Constant<value = int64[1] {1000000}>()
      s = ConstantOfShape(shp)
    }>(m, c)
  })";

std::vector<Row> RunAllocationLimits() {
  auto bomb = [](const char* body) { return Model([body] { return Bomb(body); }); };
  return {
      {"ConstantOfShape",
       bomb("s = Constant<value = int64[3] {100000, 100000, 100000}>()  y = ConstantOfShape(s)"),
       kRun, 2, "more than the limit"},
      {"Expand",
       bomb("s = Constant<value = int64[3] {100000, 100000, 2}>()  y = Expand(x, s)"), kRun, 2,
       "more than the limit"},
      {"Tile", bomb("r = Constant<value = int64[1] {4000000000000}>()  y = Tile(x, r)"), kRun, 2,
       "more than the limit"},
      {"Range",
       bomb("a = Constant<value = float {0}>()  b = Constant<value = float {1e18}>()"
            "  d = Constant<value = float {1}>()  y = Range(a, b, d)"),
       kRun, 2, "range of 1e+18 elements"},
      {"RangeInt64",
       bomb("a = Constant<value = int64 {-9223372036854775807}>()"
            "  b = Constant<value = int64 {9223372036854775807}>()"
            "  d = Constant<value = int64 {1}>()  r = Range(a, b, d)  y = Cast<to = 1>(r)"),
       kRun, 2, "range of more than 4294967296 elements"},
      {"ResizeScales",
       bomb("e = Constant<value = float[0] {}>()  s = Constant<value = float[1] {1e12}>()"
            "  y = Resize(x, e, s)"),
       kRun, 2, "too large"},
      {"ResizeSizes",
       bomb("e = Constant<value = float[0] {}>()  s = Constant<value = int64[1] {5000000000000}>()"
            "  y = Resize(x, e, e, s)"),
       kRun, 2, "output [5000000000000] too large"},
      {"Pad", bomb("p = Constant<value = int64[2] {0, 5000000000000}>()  y = Pad(x, p)"), kRun, 2,
       "more than the limit"},
      {"OneHot",
       bomb("i = Constant<value = int64[1] {0}>()  d = Constant<value = int64 {5000000000000}>()"
            "  v = Constant<value = float[2] {0, 1}>()  y = OneHot(i, d, v)"),
       kRun, 2, "more than the limit"},
      {"Reshape", bomb("s = Constant<value = int64[2] {4000000000, 4000000000}>()  y = Reshape(x, s)"),
       kRun, 2, "shape overflows"},
      // Issue 26: a Loop with a huge trip count whose body emits a 4 MB scan output per trip
      // grew past 2 GB of RSS within 7 s; the memory budget refuses it once the run holds
      // more than --max-memory (default a quarter of physical memory).
      {"LoopScanOutputPastMemoryBudget", Model([] { return Text(kLoopScanBomb); }),
       With(kRun, {"--max-memory", "67108864"}), 2,
       "more than the memory budget of 67108864 bytes (--max-memory)", Stream::kStderr,
       "{in}m.onnx: Loop '"},
      {"LoopScanOutputPastMemoryBudgetVerify", Model([] { return Text(kLoopScanBomb); }),
       {"verify", "{in}m.onnx", "{in}m.onnx", "--samples", "1", "--max-memory", "67108864"}, 2,
       "more than the memory budget of 67108864 bytes (--max-memory)", Stream::kStderr,
       "{in}m.onnx: "},
      {"ExpandPastGivenLimit",
       bomb("s = Constant<value = int64[2] {5000, 2}>()  t = Expand(x, s)  y = Identity(t)"),
       With(kRun, {"--max-tensor-elements", "9999"}), 2, "more than the limit of 9999"},
  };
}


// ---------------------------------------------------------------------------------------------
// Issue 14: crashes (signals with nothing on stderr), test-data files, allocation failure,
// structure, terminal escapes and overflow. Each row crashed, hung or misbehaved before its fix.

// ONNX text of If nodes nested `depth` deep through their then branches.
std::string NestedIfsText(int depth) {
  // Level i wraps levels below it: the openings outermost first, then the core, then the
  // closings innermost first. Built in one pass: wrapping a growing string level by level copies
  // it once per level (about a second per process start at 6000 levels, in every entry of this
  // suite, since gtest builds the rows before it runs one).
  std::string text = "<ir_version: 8, opset_import: [\"\" : 17]>\ng (bool c) => (float[1] y) {\n";
  for (int i = depth - 1; i >= 0; --i) {
    absl::StrAppend(&text, "y = If(c) <then_branch = t", i, " () => (float[1] y) { ");
  }
  absl::StrAppend(&text, "y = Constant<value = float[1] {1}>()");
  for (int i = 0; i < depth; ++i) {
    absl::StrAppend(&text, " }, else_branch = e", i,
                    " () => (float[1] y) { y = Constant<value = float[1] {1}>() }>");
  }
  absl::StrAppend(&text, "\n}\n");
  return text;
}

// Identity on a double input, for test-data rows: {in}td/input_0.pb is what the row builds.
std::function<void(Env&)> WithTestData(std::function<void(Env&, const std::string&)> file) {
  return [file](Env& env) {
    WriteFile(env.in("m.onnx"), Bytes(Text(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (double[N] x) => (double[N] y) { y = Identity(x) })")));
    fs::create_directories(env.in("td"));
    file(env, env.in("td/input_0.pb"));
  };
}

// Add with a sparse initializer `w` (dense dims [2,3], two values) that a row corrupts.
onnx::ModelProto WithSparse(const std::function<void(onnx::SparseTensorProto*)>& edit) {
  onnx::ModelProto m = Text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x, float[2,3] w) => (float[2,3] y) { y = Add(x, w) })");
  m.mutable_graph()->mutable_input()->RemoveLast();
  onnx::SparseTensorProto* st = m.mutable_graph()->add_sparse_initializer();
  st->add_dims(2);
  st->add_dims(3);
  onnx::TensorProto* values = st->mutable_values();
  values->set_name("w");
  values->set_data_type(onnx::TensorProto::FLOAT);
  values->add_dims(2);
  values->add_float_data(1);
  values->add_float_data(2);
  onnx::TensorProto* indices = st->mutable_indices();
  indices->set_data_type(onnx::TensorProto::INT64);
  indices->add_dims(2);
  indices->add_int64_data(1);
  indices->add_int64_data(4);
  edit(st);
  return m;
}

std::vector<Row> Crashes() {
  auto text = [](const char* t) { return Model([t] { return Text(t); }); };
  const std::vector<std::string> dry = {"opt", "{in}m.onnx", "--dry-run", "--target", "none"};
  const char* depth_to_space = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4,2,2] x) => (float[1,1,4,4] y) { y = DepthToSpace<blocksize = 4294967296>(x) })";
  const char* space_to_depth = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4,2,2] x) => (float[1,1,4,4] y) { y = SpaceToDepth<blocksize = 4294967296>(x) })";
  const char* split_zero = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[6,4] x) => (float[6,4] y) {
      s = Constant<value = int64 {0}>()  q = SplitToSequence(x, s)
      i = Constant<value = int64 {0}>()  y = SequenceAt(q, i)
    })";
  const char* resize_huge = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,1,2,2] x) => (float[1,1,32000,32000] y) {
      e = Constant<value = float[0] {}>()  s = Constant<value = int64[4] {1, 1, 32000, 32000}>()
      y = Resize(x, e, e, s)
    })";
  const char* matmul_batch = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[65536,65536,1,0] a, float[0,1] b) => (float[65536,65536,1,1] y) { y = MatMul(a, b) })";
  auto text_file = [](std::string body) {
    return [body](Env& env) { WriteFile(env.in("m.onnxtxt"), body); };
  };
  const std::string nested = NestedIfsText(6000);
  // 2^31 floats (8 GiB) of external data in a sparse file: a model of about 100 bytes.
  auto sparse_weights = [](Env& env) {
    onnx::ModelProto m = Text(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[1] x) => (float[2147483648] y) <float[1] w = {0}> { y = Add(x, w) })");
    onnx::TensorProto* t = m.mutable_graph()->mutable_initializer(0);
    t->clear_float_data();
    t->set_dims(0, int64_t{1} << 31);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value("w.bin");
    WriteFile(env.in("m.onnx"), Bytes(m));
    WriteFile(env.in("w.bin"), "");
    fs::resize_file(env.in("w.bin"), uintmax_t{8} << 30);
  };
  return {
      // libonnx's text parser recursed once per level: SIGSEGV at ~6000 nested Ifs.
      {"TextNestedIfs", text_file(nested), {"check", "{in}m.onnxtxt"}, 2,
       "nested deeper than the limit of 100", Stream::kStderr, "{in}m.onnxtxt: "},
      {"TextNestedIfsPastCap", text_file(nested),
       {"opt", "--passes", "none", "{in}m.onnxtxt", "-o", "{out}o.onnx", "--max-nesting", "10000"}, 2,
       "nested deeper than the limit of 1000", Stream::kStderr, "{in}m.onnxtxt: "},
      // blocksize 2^32 squares to 0 in int64: SIGFPE in libonnx's inference and in run.
      {"DepthToSpaceHugeBlocksizeCheck", text(depth_to_space), kCheck, 0, "0 broadcasting nodes",
       Stream::kStdout},
      {"DepthToSpaceHugeBlocksizeOpt", text(depth_to_space), dry, 0, "", Stream::kStdout},
      {"DepthToSpaceHugeBlocksizeRun", text(depth_to_space), kRun, 2, "blocksize 4294967296",
       Stream::kStderr, "{in}m.onnx: "},
      {"DepthToSpaceHugeBlocksizeVerify", text(depth_to_space),
       {"verify", "{in}m.onnx", "{in}m.onnx"}, 0, "blocksize 4294967296", Stream::kStdout},
      {"SpaceToDepthHugeBlocksizeRun", text(space_to_depth), kRun, 2, "blocksize 4294967296",
       Stream::kStderr, "{in}m.onnx: "},
      {"SplitToSequenceZeroCheck", text(split_zero), kCheck, 0, "", Stream::kStdout},
      {"SplitToSequenceZeroOpt", text(split_zero), dry, 0, "", Stream::kStdout},
      {"SplitToSequenceZeroRun", text(split_zero), kRun, 2, "split must be positive",
       Stream::kStderr, "{in}m.onnx: "},
      // Test-data files: only regular files, sized before anything is allocated.
      {"TestDataIsADirectory",
       WithTestData([](Env&, const std::string& f) { fs::create_directories(f); }),
       {"run", "{in}m.onnx", "--test-data", "{in}td"}, 2, "is a directory", Stream::kStderr,
       "{in}td/input_0.pb: "},
      {"TestDataDeclares2p32Doubles",
       WithTestData([](Env&, const std::string& f) {
         // dims [2^32], DOUBLE, name "x", no payload: 11 bytes. The 32 GB reserve came before
         // the size check (SIGABRT under the cap; without one, 32 GB of address space).
         WriteFile(f, std::string("\x08\x80\x80\x80\x80\x10\x10\x0b\x42\x01x", 11));
       }),
       {"run", "{in}m.onnx", "--test-data", "{in}td"}, 2, "payload has 0 bytes",
       Stream::kStderr, "{in}td/input_0.pb: ", 3072},
      {"TestDataDeclares2p32DoublesVerify",
       WithTestData([](Env&, const std::string& f) {
         WriteFile(f, std::string("\x08\x80\x80\x80\x80\x10\x10\x0b\x42\x01x", 11));
       }),
       {"verify", "{in}m.onnx", "{in}m.onnx", "--test-data", "{in}td"}, 2, "payload has 0 bytes",
       Stream::kStderr, "{in}m.onnx: {in}td/input_0.pb: ", 3072},
      {"TestDataIsAFifo",
       WithTestData([](Env&, const std::string& f) { ::mkfifo(f.c_str(), 0644); }),
       {"run", "{in}m.onnx", "--test-data", "{in}td"}, 2, "not a regular file", Stream::kStderr,
       "{in}td/input_0.pb: "},
      {"TestDataIsDevZero",
       WithTestData([](Env&, const std::string& f) { fs::create_symlink("/dev/zero", f); }),
       {"run", "{in}m.onnx", "--test-data", "{in}td"}, 2, "not a regular file", Stream::kStderr,
       "{in}td/input_0.pb: "},
      {"TestDataSparse10GiB",
       WithTestData([](Env&, const std::string& f) {
         WriteFile(f, "");
         fs::resize_file(f, uintmax_t{10} << 30);
       }),
       {"run", "{in}m.onnx", "--test-data", "{in}td"}, 2, "more than the limit of 2147483647",
       Stream::kStderr, "{in}td/input_0.pb: "},
      {"InputFileIsAFifo",
       WithTestData([](Env&, const std::string& f) { ::mkfifo(f.c_str(), 0644); }),
       {"run", "{in}m.onnx", "--input", "x={in}td/input_0.pb"}, 2, "not a regular file",
       Stream::kStderr, "{in}td/input_0.pb: "},
      // Bounded options: SIGABRT (std::system_error, a 2-billion-entry vector) before; a
      // --samples past INT_MAX wrapped silently.
      {"RunThreads100000", text(kAdd), With(kRun, {"--threads", "100000"}), 64,
       "--threads must be between 1 and 1024"},
      {"VerifySamples2e9", text(kAdd),
       {"verify", "{in}m.onnx", "{in}m.onnx", "--samples", "2000000000"}, 64,
       "--samples must be between 1 and 100000"},
      {"VerifySamplesPastIntMax", text(kAdd),
       {"verify", "{in}m.onnx", "{in}m.onnx", "--samples", "4294967297"}, 64,
       "--samples must be between 1 and 100000"},
      // Under an address-space cap, allocation failure is exit 2 with one line, never abort.
      // A memory budget past the cap (1 TiB) keeps these rows on the allocator's path whatever
      // the machine's memory (the default budget is a quarter of it).
      // The 4 GB output fits under the cap; the kernel's tap tables then do not.
      {"ResizeHugeUnderCap", text(resize_huge), kUncapped, 2, "out of memory", Stream::kStderr,
       "{in}m.onnx: ", 7812},
      {"MatMulBatchAtLimitUnderCap", text(matmul_batch), kUncapped, 2, "cannot allocate",
       Stream::kStderr, "{in}m.onnx: ", 3072},
      {"SparseDataFileUnderCapRun", sparse_weights, kUncapped, 2, "out of memory", Stream::kStderr, "{in}m.onnx: ",
       3072},
  };
}

std::vector<Row> StructureAndNames() {
  auto text = [](const char* t) { return Model([t] { return Text(t); }); };
  const char* two_initializers = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <float[2] w = {1, 2}, float[2] w = {3, 4}> { y = Add(x, w) })";
  // Names holding a carriage return and escape sequences (clear screen, set title, bell).
  auto escaped_output = Model([] {
    onnx::ModelProto m = Text(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2] x) => (float[2] y) { y = Relu(x) })");
    const std::string name = "y\r\x1b[2J\x1b]0;title\x07";
    m.mutable_graph()->mutable_output(0)->set_name(name);
    m.mutable_graph()->mutable_node(0)->set_output(0, name);
    return m;
  });
  auto escaped_undefined = Model([] {
    onnx::ModelProto m = Text(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2] x) => (float[2] y) { y = Add(x, z) })");
    m.mutable_graph()->mutable_node(0)->set_input(1, "z\r\x1b[31mOK");
    return m;
  });
  return {
      {"TwoInitializersOneNameCheck", text(two_initializers), kCheck, 2,
       "value 'w' is defined twice (again by an initializer)", Stream::kStderr, "{in}m.onnx: "},
      {"TwoInitializersOneNameRun", text(two_initializers), kRun, 2, "defined twice",
       Stream::kStderr, "{in}m.onnx: "},
      {"SparseIndexOutOfRange",
       Model([] { return WithSparse([](onnx::SparseTensorProto* st) {
         st->mutable_indices()->set_int64_data(1, 6);
       }); }),
       kCheck, 2, "sparse tensor 'w' index 6 out of range", Stream::kStderr, "{in}m.onnx: "},
      {"SparseIndicesNotIncreasing",
       Model([] { return WithSparse([](onnx::SparseTensorProto* st) {
         st->mutable_indices()->set_int64_data(1, 1);
       }); }),
       kCheck, 2, "not strictly increasing", Stream::kStderr, "{in}m.onnx: "},
      {"SparseIndicesWrongShape",
       Model([] { return WithSparse([](onnx::SparseTensorProto* st) {
         st->mutable_indices()->set_dims(0, 3);
         st->mutable_indices()->add_int64_data(5);
       }); }),
       kRun, 2, "indices must be [2] or [2, 2]", Stream::kStderr, "{in}m.onnx: "},
      {"SparseNegativeIndex2D",
       Model([] { return WithSparse([](onnx::SparseTensorProto* st) {
         onnx::TensorProto* ix = st->mutable_indices();
         ix->clear_int64_data();
         ix->add_dims(2);
         for (int64_t v : {0, 1, 1, -1}) ix->add_int64_data(v);
       }); }),
       kCheck, 2, "index -1 out of range on axis 1", Stream::kStderr, "{in}m.onnx: "},
      {"EscapesInOutputNameRun", escaped_output, {"run", "{in}m.onnx"}, 0,
       "output 'y\\x0d\\x1b[2J\\x1b]0;title\\x07'", Stream::kStdout},
      {"EscapesInUndefinedNameCheck", escaped_undefined, kCheck, 2,
       "reads 'z\\x0d\\x1b[31mOK', defined nowhere", Stream::kStderr, "{in}m.onnx: "},
  };
}

// UBSan reported signed overflow on these (model data in int64 arithmetic); the normal build
// gave the same answers, so they fail without their fix only under the sanitizers.
std::vector<Row> Overflow() {
  auto text = [](const char* t) { return Model([t] { return Text(t); }); };
  return {
      {"ConvTransposePadsInt64Min", text(R"(
         <ir_version: 8, opset_import: ["" : 13]>
         g (float[1,1,3,3] x, float[1,1,2,2] w) => (float[1,1,4,4] y) {
           y = ConvTranspose<pads = [-9223372036854775808, 0, 0, 0]>(x, w)
         })"),
       kRun, 2, "below 2^31", Stream::kStderr, "{in}m.onnx: "},
      {"MaxUnpoolHugeStrides", text(R"(
         <ir_version: 8, opset_import: ["" : 13]>
         g (float[1,1,2,2] x, int64[1,1,2,2] i) => (float[1,1,4,4] y) {
           y = MaxUnpool<kernel_shape = [2, 2], strides = [9223372036854775807, 1]>(x, i)
         })"),
       kRun, 2, "overflows int64", Stream::kStderr, "{in}m.onnx: "},
      {"RangeInt64StepPastInt64", text(R"(
         <ir_version: 8, opset_import: ["" : 13]>
         g (float[2] x) => (int64[4] y) {
           a = Constant<value = int64 {-9223372036854775807}>()
           b = Constant<value = int64 {9223372036854775807}>()
           d = Constant<value = int64 {5000000000000000000}>()
           y = Range(a, b, d)
         })"),
       {"run", "{in}m.onnx"}, 0, "int64[4]", Stream::kStdout},
      {"DepthToSpaceBlocksizeSquareOverflows", text(R"(
         <ir_version: 8, opset_import: ["" : 13]>
         g (float[1,4,2,2] x) => (float[1,1,4,4] y) { y = DepthToSpace<blocksize = 3037000500>(x) })"),
       kRun, 2, "blocksize 3037000500", Stream::kStderr, "{in}m.onnx: "},
      {"SplitSizesOverflow", text(R"(
         <ir_version: 8, opset_import: ["" : 13]>
         g (float[4] x) => (float[2] y, float[2] z) {
           s = Constant<value = int64[2] {9223372036854775807, 9223372036854775807}>()
           y, z = Split(x, s)
         })"),
       kRun, 2, "overflow int64", Stream::kStderr, "{in}m.onnx: "},
      // Issue 26: pads of 2^31 on both sides of two spatial dims make each output dim fit
      // but their product overflow (UBSan in WindowGeometry::out_size; the normal build then
      // refused a wrapped im2col size).
      {"ConvPadsNear2p31", text(R"(
         <ir_version: 8, opset_import: ["" : 13]>
         g (float[1,1,1,1] x, float[1,1,1,1] w) => (float[1,1,1,1] y) {
           y = Conv<pads = [2147483648, 2147483648, 2147483648, 2147483648]>(x, w)
         })"),
       kRun, 2, "multiply past int64", Stream::kStderr, "{in}m.onnx: "},
      {"MaxPoolKernelShapeProductOverflows", text(R"(
         <ir_version: 8, opset_import: ["" : 13]>
         g (float[1,1,1,1,1] x) => (float[1,1,1,1,1] y) {
           y = MaxPool<kernel_shape = [2147483648, 2147483648, 2147483648]>(x)
         })"),
       kRun, 2, "multiplies past int64", Stream::kStderr, "{in}m.onnx: "},
      {"ReverseSequenceAxesSumOverflows", text(R"(
         <ir_version: 8, opset_import: ["" : 13]>
         g (float[2,2] x) => (float[2,2] y) {
           lens = Constant<value = int64[2] {1, 1}>()
           y = ReverseSequence<batch_axis = 9223372036854775807, time_axis = 1>(x, lens)
         })"),
       kRun, 2, "batch_axis, time_axis being 0 and 1", Stream::kStderr, "{in}m.onnx: "},
      {"ReverseSequenceZeroSizeHugeDims", text(R"(
         <ir_version: 8, opset_import: ["" : 13]>
         g (float[1] unused) => (float[0,1,4294967296,4294967296] y) {
           s = Constant<value = int64[4] {0, 1, 4294967296, 4294967296}>()
           lens = Constant<value = int64[1] {0}>()
           x = ConstantOfShape(s)
           y = ReverseSequence<batch_axis = 1, time_axis = 0>(x, lens)
         })"),
       {"run", "{in}m.onnx"}, 0, "", Stream::kStdout},
  };
}

std::vector<Row> AllRows() {
  std::vector<Row> all;
  auto add = [&](const char* group, std::vector<Row> rows) {
    for (Row& r : rows) {
      r.name = absl::StrCat(group, "_", r.name);
      all.push_back(std::move(r));
    }
  };
  add("Protobuf", MalformedProtobuf());
  add("Sizes", HostileSizes());
  add("ExternalData", HostileExternalData());
  add("Graph", GraphFaults());
  add("Broadcast", BroadcastFaults());
  add("Io", IoFaults());
  add("RunLimit", RunAllocationLimits());
  add("Crash", Crashes());
  add("Structure", StructureAndNames());
  add("Overflow", Overflow());
  return all;
}

// gtest prints parameters on failure; the row's name is what identifies it.
void PrintTo(const Row& row, std::ostream* os) { *os << row.name; }

std::vector<std::string> ExpandedArgs(const Row& row, const Env& env) {
  std::vector<std::string> args;
  for (const std::string& a : row.args) args.push_back(env.Expand(a));
  return args;
}

// The row's message where its stream puts it: on stdout when the command succeeds (then with no
// error text) or reports there; a refusal on stderr is one line naming what was refused (stdout
// may hold what the command did before it).
void ExpectMessage(const Row& row, const Result& r) {
  if (row.code == 0 || row.stream == Stream::kStdout) {
    EXPECT_THAT(r.out, HasSubstr(row.message));
    if (row.code == 0) {
      EXPECT_EQ(WithoutRunNotes(r.err), "");
    }
  }
  if (row.stream == Stream::kStderr && row.code != 0) {
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(row.message));
  }
}

class Catalogue : public ::testing::TestWithParam<Row> {};

TEST_P(Catalogue, RefusedCleanly) {
  const Row& row = GetParam();
  Env env;
  row.build(env);
  if (::testing::Test::IsSkipped()) return;
  const std::vector<std::string> args = ExpandedArgs(row, env);
  if (row.address_space_mb > 0 && kAddressSanitizer) {
    GTEST_SKIP() << "an address-space cap does not apply under ASan";
  }
  const std::map<std::string, std::string> before = Snapshot(env.root());
  const Result r = RunCli(args, env.scratch(), row.address_space_mb);

  EXPECT_EQ(r.code, row.code) << "stdout: " << r.out << "\nstderr: " << r.err;
  ExpectMessage(row, r);
  if (HasFatalFailure()) return;
  if (row.stream == Stream::kStderr && row.code != 0 && !row.starts.empty()) {
    const std::string starts = env.Expand(row.starts);
    EXPECT_EQ(r.err.rfind(starts, 0), 0u) << "expected to start with " << starts << ": " << r.err;
  }
  // Names are data: a carriage return or an escape sequence never reaches the terminal raw.
  for (const std::string* stream : {&r.out, &r.err}) {
    EXPECT_EQ(stream->find_first_of("\r\x1b\x07"), std::string::npos) << *stream;
  }
  // Nothing written, nothing left behind, nothing outside touched.
  EXPECT_EQ(Snapshot(env.root()), before);
}

INSTANTIATE_TEST_SUITE_P(Hostile, Catalogue, ::testing::ValuesIn(AllRows()),
                         [](const auto& info) { return info.param.name; });

// A model file truncated by another process while onnx-bcast reads it: with the file mapped,
// the next access past the new end was SIGBUS (issue 14). Now the file is read, and a short read
// is refused. 64 MiB of weights make the parse take long enough to be cut at random moments;
// every outcome must be an exit code (0 when the cut came too late, 2 otherwise), never a signal.
TEST(Truncation, ModelTruncatedWhileReadIsNeverASignal) {
  Env env;
  const std::string model = env.in("m.onnx");
  const std::string bytes = Bytes(WithInitializer([](onnx::TensorProto* t) {
    // [N,2,3] broadcasts against x [2,3], so a whole read is exit 0 (not a broadcast error).
    t->clear_float_data();
    t->clear_dims();
    for (int64_t d : {int64_t{2} << 20, int64_t{2}, int64_t{3}}) t->add_dims(d);
    t->set_raw_data(std::string(size_t{48} << 20, '\1'));
  }));
  uint32_t seed = 14;
  int cut = 0, whole = 0;
  for (int trial = 0; trial < 12; ++trial) {
    WriteFile(model, bytes);
    const pid_t pid = test_support::SpawnCli(Cli(), {"check", model}, env.scratch() + "/out",
                                             env.scratch() + "/err");
    seed = seed * 1103515245 + 12345;
    ::usleep(5000 + (seed >> 16) % 60000);
    ASSERT_EQ(::truncate(model.c_str(), 4096), 0);
    const int code = test_support::WaitExitCode(pid);
    const std::string err = ReadAll(env.scratch() + "/err");
    ASSERT_LT(code, 128) << "killed by signal " << code - 128 << ": " << err;
    EXPECT_TRUE(code == 0 || code == 2) << code << ": " << err;
    if (code == 2) {
      ++cut;
      EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
      EXPECT_EQ(err.rfind(model + ": ", 0), 0u) << err;
    } else {
      ++whole;
    }
  }
  std::printf("truncated during the read: %d, after: %d\n", cut, whole);
}

// =============================================================================================
// Hangs and blow-ups from small files (issue 14, group 3). Besides the catalogue's contract
// (exit code, one line, nothing written), each row bounds its wall time, and a refusal's line
// starts with the model's path. The CLI is killed at twice the bound, so a regression fails
// the row instead of hanging the suite.

// A model of local functions F0..F<levels>: each calls the next `fanout` times in a chain, the
// last is a Relu. About 150 bytes per level; fanout^levels inlines when expanded.
onnx::ModelProto FunctionBomb(int levels, int fanout) {
  onnx::ModelProto m = Text(R"(
    <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
    g (float[2] x) => (float[2] y) { y = local.F0(x) })");
  for (int level = 0; level <= levels; ++level) {
    onnx::FunctionProto* f = m.add_functions();
    f->set_name(absl::StrCat("F", level));
    f->set_domain("local");
    f->add_input("a");
    f->add_output("b");
    for (const char* domain : {"", "local"}) {
      onnx::OperatorSetIdProto* imp = f->add_opset_import();
      imp->set_domain(domain);
      imp->set_version(domain[0] == '\0' ? 17 : 1);
    }
    const int calls = level == levels ? 1 : fanout;
    for (int c = 0; c < calls; ++c) {
      onnx::NodeProto* n = f->add_node();
      if (level == levels) {
        n->set_op_type("Relu");
      } else {
        n->set_op_type(absl::StrCat("F", level + 1));
        n->set_domain("local");
      }
      n->add_input(c == 0 ? "a" : absl::StrCat("t", c));
      n->add_output(c + 1 == calls ? "b" : absl::StrCat("t", c + 1));
    }
  }
  return m;
}

// A chain of `names` Identity nodes followed by `ifs` If nodes whose two branches (one node
// each) read the chain's last value: every subgraph has `names` outer names in scope.
onnx::ModelProto ManySubgraphs(int names, int ifs) {
  onnx::ModelProto m = Text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x, bool c) => (float[2] y) { y = Identity(x) })");
  onnx::GraphProto* g = m.mutable_graph();
  g->clear_node();
  std::string prev = "x";
  auto add = [&](const char* op, const std::string& in, const std::string& out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->add_input(in);
    n->add_output(out);
    return n;
  };
  for (int i = 0; i < names; ++i) {
    add("Identity", prev, absl::StrCat("t", i));
    prev = absl::StrCat("t", i);
  }
  for (int i = 0; i < ifs; ++i) {
    onnx::NodeProto* n = add("If", "c", absl::StrCat("u", i));
    for (const char* branch : {"then_branch", "else_branch"}) {
      onnx::AttributeProto* a = n->add_attribute();
      a->set_name(branch);
      a->set_type(onnx::AttributeProto::GRAPH);
      onnx::GraphProto* sub = a->mutable_g();
      sub->set_name(branch);
      *sub->add_output() = m.graph().output(0);
      sub->mutable_output(0)->set_name("o");
      onnx::NodeProto* body = sub->add_node();
      body->set_op_type(branch[0] == 't' ? "Identity" : "Neg");
      body->add_input(prev);
      body->add_output("o");
    }
    prev = absl::StrCat("u", i);
  }
  add("Identity", prev, "y");
  return m;
}

struct BoundedRow {
  Row row;
  double max_seconds;
};

// A Loop running `trips` times around a Neg, or (scan_elements > 0) also emitting that many
// elements per trip as a scan output.
onnx::ModelProto EndlessLoop(const std::string& trips, int scan_elements = 0) {
  const std::string scan = scan_elements > 0 ? ", float[N] s" : "";
  const std::string text = absl::StrCat(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y)", scan, R"() {
      m = Constant<value = int64 {)", trips, R"(}>()
      c = Constant<value = bool {1}>()
      y)", scan_elements > 0 ? ", s" : "", R"( = Loop(m, c, x) <body = b (int64 i, bool ci, float[2] xi)
          => (bool co, float[2] xo)", scan_elements > 0 ? ", float[N] so" : "", R"() {
        co = Identity(ci)
        xo = Neg(xi)
        sh = Constant<value = int64[1] {)", std::max(scan_elements, 1), R"(}>()
        one = Constant<value = float {1}>()
        )", scan_elements > 0 ? "so = Expand(one, sh)" : "", R"(
      }>
    })");
  return Text(text.c_str());
}

// `depth` Loops nested in each other's bodies, each of 16 trips; the innermost body multiplies
// a 64x64 matrix by itself: 16^depth matrix products.
onnx::ModelProto NestedLoops(int depth) {
  std::string body = "co = Identity(ci)  xo = MatMul(xi, xi)";
  for (int level = depth; level >= 1; --level) {
    body = absl::StrCat("co = Identity(ci)  n = Constant<value = int64 {16}>()  ",
                        "t = Constant<value = bool {1}>()  xo = Loop(n, t, xi) <body = b", level,
                        " (int64 i, bool ci, float[64,64] xi) => (bool co, float[64,64] xo) { ",
                        body, " }>");
  }
  const std::string text = absl::StrCat(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[64,64] x) => (float[64,64] y) {
      n = Constant<value = int64 {1}>()  t = Constant<value = bool {1}>()
      y = Loop(n, t, x) <body = b0 (int64 i, bool ci, float[64,64] xi) => (bool co, float[64,64] xo) {
        )", body, R"( }>
    })");
  return Text(text.c_str());
}

// `count` graph inputs x0..x<count-1> of one float each; y = Identity(x0).
onnx::ModelProto ManyInputs(int count) {
  onnx::ModelProto m = Text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1] x0) => (float[1] y) { y = Identity(x0) })");
  const onnx::ValueInfoProto first = m.graph().input(0);
  for (int i = 1; i < count; ++i) {
    onnx::ValueInfoProto* v = m.mutable_graph()->add_input();
    *v = first;
    v->set_name(absl::StrCat("x", i));
  }
  return m;
}

std::vector<BoundedRow> HangsAndBlowups() {
  auto bomb = Model([] { return FunctionBomb(16, 4); });  // 4^16 inlines from 2 KB
  return {
      {{"FunctionBombCheck", bomb, kCheck, 2, "function 'local.F7' expands to more than 100000"},
       10},
      {{"FunctionBombOpt", bomb, With(kOpt, {"--target", "none"}), 2, "'local.F7'"}, 10},
      {{"FunctionBombRun", bomb, kRun, 2, "'local.F7'"}, 10},
      // 4^8 = 65536 inlines are fine by default, not past a given limit.
      {{"FunctionInlinesPastGivenLimit", Model([] { return FunctionBomb(8, 4); }),
        With(kRun, {"--max-function-inlines", "5000"}), 2, "more than 5000 nested function calls"},
       10},
      // 2.9 MB: 50k names in scope of each of 20k subgraphs. Copying the names per subgraph
      // took minutes before any command started.
      {{"ManySubgraphsOpt", Model([] { return ManySubgraphs(50'000, 10'000); }),
        {"opt", "--passes", "none", "{in}m.onnx", "--dry-run"}, 0, ""},
       30},
      {{"ManySubgraphsRun", Model([] { return ManySubgraphs(50'000, 10'000); }),
        {"run", "{in}m.onnx"}, 0, "output 'y' float32[2]", Stream::kStdout},
       30},
      // run and verify stop at --timeout (default 600 s) inside Loop iterations.
      {{"LoopTripCountMaxRun", Model([] { return EndlessLoop("9223372036854775807"); }),
        With(kRun, {"--timeout", "2"}), 2, "time limit of 2 s reached (--timeout)"},
       10},
      {{"LoopTripCountMaxVerify", Model([] { return EndlessLoop("9223372036854775807"); }),
        {"verify", "{in}m.onnx", "{in}m.onnx", "--timeout", "2"}, 2, "time limit of 2 s"},
       10},
      {{"EightNestedLoopsOf16", Model([] { return NestedLoops(8); }),
        With(kRun, {"--timeout", "2"}), 2, "time limit of 2 s reached"},
       10},
      // 17M outputs of a 16M-element window: 2.9e14 steps in one uninterruptible kernel call.
      {{"AveragePoolHugeWindow", Model([] {
          return Text(R"(
            <ir_version: 8, opset_import: ["" : 17]>
            g (float[1,1,64,64] x) => (float[1,1,4159,4159] y) {
              y = AveragePool<kernel_shape = [4096, 4096], pads = [4095, 4095, 4095, 4095]>(x)
            })");
        }),
        kRun, 2, "the work limit of one node"},
       10},
      // Each trip emits 1000 elements; the items are refused as soon as they pass the limit
      // instead of growing until memory runs out (7 GB before).
      {{"LoopScanOutputsAccumulate", Model([] { return EndlessLoop("9223372036854775807", 1000); }),
        With(kRun, {"--max-tensor-elements", "10000000"}), 2,
        "scan output 0 accumulates more than 10000000 elements"},
       10},
      // Binding 1M graph inputs searched the input list per feed (quadratic: minutes).
      {{"MillionInputsRun", Model([] { return ManyInputs(1'000'000); }), {"run", "{in}m.onnx"}, 0,
        "output 'y' float32[1]", Stream::kStdout},
       30},
  };
}

// Runs the CLI, killing it (SIGKILL) after `kill_after` seconds; the code is then 128 + 9.
// `*seconds` is the smaller of the wall time and the child's CPU time: on a machine loaded by
// other jobs the wall time grows without the CLI doing more work, and a multi-threaded run's
// CPU time exceeds its wall time; a hang (quadratic work) makes both large.
Result RunCliBounded(const std::vector<std::string>& args, const std::string& scratch,
                     double kill_after, double* seconds) {
  const auto start = std::chrono::steady_clock::now();
  const std::string out = scratch + "/stdout", err = scratch + "/stderr";
  const pid_t pid = test_support::SpawnCli(Cli(), args, out, err);
  Result r;
  int status = 0;
  struct rusage usage {};
  for (;;) {
    if (::wait4(pid, &status, WNOHANG, &usage) == pid) break;
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (*seconds > kill_after) {
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &usage);
      break;
    }
    ::usleep(10'000);
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
                     1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  *seconds = std::min(wall, cpu);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadAll(out);
  r.err = ReadAll(err);
  return r;
}

void PrintTo(const BoundedRow& row, std::ostream* os) { *os << row.row.name; }

class Bounded : public ::testing::TestWithParam<BoundedRow> {};

TEST_P(Bounded, EndsInTime) {
  const Row& row = GetParam().row;
  // The bounds tell linear from the hang (quadratic: minutes to hours); an instrumented build
  // on a loaded machine runs several times slower without being either.
  const double bound = GetParam().max_seconds * (kAddressSanitizer ? 4 : 1);
  Env env;
  row.build(env);
  const std::vector<std::string> args = ExpandedArgs(row, env);
  const std::map<std::string, std::string> before = Snapshot(env.root());
  double seconds = 0;
  // Killed at 4 times the bound of wall time: a loaded machine is slow, a hang endless.
  const Result r = RunCliBounded(args, env.scratch(), 4 * bound, &seconds);

  EXPECT_EQ(r.code, row.code) << "stdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_LE(seconds, bound);
  ExpectMessage(row, r);
  if (HasFatalFailure()) return;
  if (row.stream == Stream::kStderr && row.code != 0) {
    // The model's path (args[1]) starts the line.
    EXPECT_EQ(r.err.rfind(args[1] + ": ", 0), 0u) << r.err;
  }
  EXPECT_EQ(Snapshot(env.root()), before);
}

INSTANTIATE_TEST_SUITE_P(Hang, Bounded, ::testing::ValuesIn(HangsAndBlowups()),
                         [](const auto& info) { return info.param.row.name; });

}  // namespace
}  // namespace onnx_bcast
