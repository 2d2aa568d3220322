// libFuzzer harness: load + SaveModel of a model whose external data (locations, offsets,
// lengths, the files and links they name) comes from the input, in a fresh scratch tree with
// decoys beside it. Aborts when a save
//   - changed, created or removed anything but the names derived from its output
//     (OUT, OUT.data, OUT.<n>.data, in the output's directory; only regular files there),
//   - touched a decoy (.bashrc, a FIFO, a character device, a symlinked directory and the file
//     behind it, a link to the input model, files outside the model's directory),
//   - left the input model reading other bytes than before,
//   - succeeded but the saved model does not load again with identical payload bytes, or
//   - failed and left anything behind in the output directory.
//
// Input: parts separated by "#FILE#" (fuzz_scratch.h). Part 0 is a header, one line each:
//   f REL PART              in/REL, a regular file holding part number PART
//   s REL SIZE              in/REL, a sparse file of SIZE bytes (at most 1 MiB), no data
//   l REL TARGET            in/REL, a symlink to TARGET (any string)
//   p REL                   in/REL, a FIFO
//   d REL                   in/REL, a directory
//   t NAME TYPE DIMS K=V..  an external tensor: data_type TYPE, dims "2,3" ("-" for none),
//                           external_data entries K=V (%XX escapes allowed, any keys)
//   r NAME TYPE DIMS PART   a tensor with raw_data from part PART
//   train                   later tensors go to training_info[0].initialization
//   ext N                   the --external-data save uses threshold N
// REL never contains "." or ".." components (the harness only writes below in/); TARGET and
// the locations are unrestricted: they are what the code under test must not be led by.
// The model is in/m.onnx; saves go to out/m.onnx, out/e.onnx (--external-data) and
// in/n.onnx (the input's own directory, --external-data).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <system_error>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "fuzz/fuzz_scratch.h"
#include "proto/model_io.h"
#include "proto/tensor_codec.h"
#include "proto/tensor_util.h"

namespace {

namespace fs = std::filesystem;
namespace proto = onnx_bcast::proto;
namespace fz = onnx_bcast::fuzz;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_save: %s\n", what.c_str());
  std::abort();
}

// What an entry is, without following links: type, identity, size, times, contents.
struct Entry {
  mode_t mode = 0;
  ino_t ino = 0;
  off_t size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  std::string contents;  // regular files: the bytes; symlinks: the target
  bool operator==(const Entry& o) const {
    return mode == o.mode && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns &&
           ctime_ns == o.ctime_ns && contents == o.contents;
  }
};
using Snapshot = std::map<std::string, Entry>;  // path relative to the root -> entry

void Walk(const std::string& root, const std::string& rel, Snapshot* out) {
  const std::string path = rel.empty() ? root : root + "/" + rel;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;
  Entry e;
  e.mode = st.st_mode;
  e.ino = st.st_ino;
  e.size = S_ISDIR(st.st_mode) ? 0 : st.st_size;  // a directory's size follows its entries
  e.mtime_ns = S_ISDIR(st.st_mode) ? 0 : st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
  e.ctime_ns = S_ISDIR(st.st_mode) ? 0 : st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
  if (S_ISREG(st.st_mode)) {
    std::ifstream in(path, std::ios::binary);
    e.contents.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else if (S_ISLNK(st.st_mode)) {
    std::error_code ec;
    e.contents = fs::read_symlink(path, ec).string();
  }
  (*out)[rel] = e;
  if (S_ISDIR(st.st_mode)) {
    std::error_code ec;
    for (const fs::directory_entry& d : fs::directory_iterator(path, ec)) {
      Walk(root, (rel.empty() ? "" : rel + "/") + d.path().filename().string(), out);
    }
  }
}

Snapshot Take(const std::string& root) {
  Snapshot s;
  Walk(root, "", &s);
  return s;
}

// Splits on `sep`, dropping empty pieces when `skip_empty`.
std::vector<std::string_view> Split(std::string_view s, char sep, bool skip_empty) {
  std::vector<std::string_view> out;
  for (;;) {
    const size_t at = s.find(sep);
    const std::string_view piece = s.substr(0, at);
    if (!skip_empty || !piece.empty()) out.push_back(piece);
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

template <typename Int>
bool ToInt(std::string_view s, Int* out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool ParseDims(std::string_view text, std::vector<int64_t>* dims) {
  if (text == "-") return true;
  for (std::string_view d : Split(text, ',', false)) {
    int64_t v = 0;
    if (!ToInt(d, &v)) return false;
    dims->push_back(v);
  }
  return dims->size() <= 8;
}

// Payloads of every tensor in ForEachModelTensor order; nullopt where one does not decode.
std::vector<std::optional<proto::RawTensor>> Payloads(const proto::Model& model) {
  std::vector<std::optional<proto::RawTensor>> out;
  onnx::ModelProto copy = model.proto;
  proto::ForEachModelTensor(&copy, [&](onnx::TensorProto* t) {
    absl::StatusOr<proto::RawTensor> raw = proto::DecodeTensor(*t, model.base_dir, 1 << 20);
    out.push_back(raw.ok() ? std::optional<proto::RawTensor>(*std::move(raw)) : std::nullopt);
  });
  return out;
}

bool SamePayload(const proto::RawTensor& a, const proto::RawTensor& b) {
  return a.data_type == b.data_type && a.dims == b.dims && a.bytes == b.bytes &&
         a.strings == b.strings;
}

// Names a save to `dir_rel`/`name` may create, replace or remove: OUT, OUT.data, OUT.<n>.data.
bool IsOurs(const std::string& rel, const std::string& dir_rel, const std::string& name) {
  if (rel.compare(0, dir_rel.size() + 1, dir_rel + "/") != 0) return false;
  const std::string leaf = rel.substr(dir_rel.size() + 1);
  if (leaf == name || leaf == name + ".data") return true;
  static const std::regex numbered(R"(^(.*)\.[0-9]+\.data$)");
  std::smatch m;
  return std::regex_match(leaf, m, numbered) && m[1] == name;
}

// Compares the tree after a save with the one before it.
void CheckTree(const Snapshot& before, const Snapshot& after, const std::string& dir_rel,
               const std::string& name, bool saved, const std::string& what) {
  for (const auto& [rel, e] : before) {
    auto it = after.find(rel);
    const bool ours = saved && IsOurs(rel, dir_rel, name) && S_ISREG(e.mode);
    if (ours) continue;  // replaced or removed by design
    if (it == after.end()) Fail(what + ": removed " + rel);
    if (rel == dir_rel || rel.empty() || S_ISDIR(e.mode)) {
      if ((it->second.mode & S_IFMT) != (e.mode & S_IFMT) || it->second.ino != e.ino) {
        Fail(what + ": replaced directory " + rel);
      }
      continue;
    }
    if (!(it->second == e)) Fail(what + ": changed " + rel);
  }
  for (const auto& [rel, e] : after) {
    if (before.count(rel) != 0) continue;
    if (!saved) Fail(what + ": failed but left " + rel);
    if (!IsOurs(rel, dir_rel, name) || !S_ISREG(e.mode)) Fail(what + ": created " + rel);
  }
}

struct Spec {
  std::vector<std::string_view> parts;
  int64_t threshold = 16;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Spec spec;
  spec.parts = fz::SplitParts(std::string_view(reinterpret_cast<const char*>(data), size));
  static int counter = 0;
  const std::string root = fz::ScratchRoot() + "/s" + std::to_string(counter++);
  const std::string in = root + "/in", out = root + "/out", outside = root + "/outside";
  std::error_code ec;
  for (const std::string& d : {root, in, out, outside}) {
    fs::create_directory(d, ec);
    if (ec) Fail("cannot create " + d);
  }
  // Decoys: every kind of file a location or an output name might be aimed at.
  fz::WriteScratchFile(out, ".bashrc", "export PS1=precious\n");
  fz::WriteScratchFile(outside, "target", "outside, precious");
  fz::WriteScratchFile(root, "secret", "beside, precious");
  fs::create_directory_symlink("../outside", out + "/d", ec);
  ::mkfifo((out + "/fifo").c_str(), 0644);
  ::mknod((out + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3));
  fs::create_symlink("../in/m.onnx", out + "/in", ec);
  fs::create_symlink("../outside", in + "/up", ec);

  // The model and its files, as the header says.
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("g");
  onnx::GraphProto* target_graph = graph;
  for (std::string_view line : Split(spec.parts[0], '\n', true)) {
    const std::vector<std::string_view> w = Split(line, ' ', true);
    if (w.empty()) continue;
    auto part = [&](std::string_view index) -> std::optional<std::string_view> {
      size_t k = 0;
      if (!ToInt(index, &k) || k == 0 || k >= spec.parts.size()) return std::nullopt;
      return spec.parts[k];
    };
    if (w[0] == "f" && w.size() == 3) {
      if (auto p = part(w[2])) fz::WriteScratchFile(in, w[1], *p);
    } else if (w[0] == "s" && w.size() == 3) {
      int64_t n = 0;
      if (ToInt(w[2], &n) && n >= 0 && n <= (1 << 20) &&
          fz::WriteScratchFile(in, w[1], "")) {
        (void)::truncate((in + "/" + std::string(w[1])).c_str(), n);
      }
    } else if (w[0] == "l" && w.size() == 3) {
      if (fz::IsPlainRelative(w[1]) && fz::MakeParents(in, w[1])) {
        fs::create_symlink(PercentDecode(w[2]), in + "/" + std::string(w[1]), ec);
      }
    } else if (w[0] == "p" && w.size() == 2) {
      if (fz::IsPlainRelative(w[1]) && fz::MakeParents(in, w[1])) {
        ::mkfifo((in + "/" + std::string(w[1])).c_str(), 0644);
      }
    } else if (w[0] == "d" && w.size() == 2) {
      if (fz::IsPlainRelative(w[1]) && fz::MakeParents(in, std::string(w[1]) + "/x")) {
        fs::create_directory(in + "/" + std::string(w[1]), ec);
      }
    } else if ((w[0] == "t" || w[0] == "r") && w.size() >= 4 && target_graph->initializer_size() < 16) {
      onnx::TensorProto* t = target_graph->add_initializer();
      t->set_name(PercentDecode(w[1]));
      int type = 0;
      (void)ToInt(w[2], &type);
      t->set_data_type(type);
      std::vector<int64_t> dims;
      if (!ParseDims(w[3], &dims)) dims.clear();
      for (int64_t d : dims) t->add_dims(d);
      if (w[0] == "r") {
        if (w.size() >= 5) {
          if (auto p = part(w[4])) t->set_raw_data(std::string(*p));
        }
      } else {
        t->set_data_location(onnx::TensorProto::EXTERNAL);
        for (size_t i = 4; i < w.size(); ++i) {
          const size_t eq = w[i].find('=');
          auto* e = t->add_external_data();
          e->set_key(PercentDecode(w[i].substr(0, eq)));
          if (eq != std::string_view::npos) e->set_value(PercentDecode(w[i].substr(eq + 1)));
        }
      }
      if (target_graph == graph) {
        onnx::ValueInfoProto* o = graph->add_output();
        o->set_name(t->name());
        auto* tt = o->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(type);
        for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
      }
    } else if (w[0] == "train" && model.training_info_size() == 0) {
      target_graph = model.add_training_info()->mutable_initialization();
      target_graph->set_name("init");
    } else if (w[0] == "ext" && w.size() == 2) {
      (void)ToInt(w[1], &spec.threshold);
    }
  }
  absl::StatusOr<std::string> bytes = proto::SerializeModel(model);
  if (!bytes.ok() || !fz::WriteScratchFile(in, "m.onnx", *bytes)) {
    fs::remove_all(root, ec);
    return 0;
  }

  proto::Limits limits = fz::FuzzLimits();
  absl::StatusOr<proto::Model> loaded = proto::LoadModel(in + "/m.onnx", limits);
  if (loaded.ok()) {
    const std::vector<std::optional<proto::RawTensor>> reference = Payloads(*loaded);
    struct Save {
      std::string dir_rel, name;
      bool external;
    };
    Snapshot before = Take(root);  // each save's "after" is the next one's "before"
    for (const Save& s : {Save{"out", "m.onnx", false}, Save{"out", "e.onnx", true},
                          Save{"in", "n.onnx", true}}) {
      const std::string what = "save to " + s.dir_rel + "/" + s.name;
      proto::SaveOptions options;
      options.external_data = s.external;
      options.external_threshold_bytes = spec.threshold;
      const absl::Status status =
          proto::SaveModel(*loaded, root + "/" + s.dir_rel + "/" + s.name, options);
      Snapshot after = Take(root);
      CheckTree(before, after, s.dir_rel, s.name, status.ok(), what);
      before = std::move(after);
      // The input reads what it read before, whatever the save did.
      const std::vector<std::optional<proto::RawTensor>> input_now = Payloads(*loaded);
      for (size_t i = 0; i < reference.size(); ++i) {
        if (reference[i].has_value() &&
            (!input_now[i].has_value() || !SamePayload(*reference[i], *input_now[i]))) {
          Fail(what + ": the input model's tensor " + std::to_string(i) + " changed");
        }
      }
      if (!status.ok()) continue;
      absl::StatusOr<proto::Model> saved =
          proto::LoadModel(root + "/" + s.dir_rel + "/" + s.name, limits);
      if (!saved.ok()) Fail(what + ": saved model does not load: " + std::string(saved.status().message()));
      const std::vector<std::optional<proto::RawTensor>> payloads = Payloads(*saved);
      if (payloads.size() != reference.size()) Fail(what + ": tensor count changed");
      for (size_t i = 0; i < reference.size(); ++i) {
        if (reference[i].has_value() &&
            (!payloads[i].has_value() || !SamePayload(*reference[i], *payloads[i]))) {
          Fail(what + ": payload of tensor " + std::to_string(i) + " differs after reload");
        }
      }
    }
  }
  fs::remove_all(root, ec);
  return 0;
}
