// Loading, validating and atomically saving ONNX models. Everything protobuf or libonnx throws is
// caught here and turned into absl::Status; nothing escapes this layer.
#include "proto/model_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/util/message_differencer.h"
#include "proto/external_data.h"
#include "proto/tensor_data.h"
#include "proto/tensor_util.h"
#include "support/status_macros.h"

namespace onnx_bcast::proto {
namespace {

namespace fs = std::filesystem;

std::string Errno() { return std::strerror(errno); }

std::string DirName(const std::string& path) {
  const fs::path p(path);
  const std::string parent = p.parent_path().string();
  return parent.empty() ? "." : parent;
}

// Prefixes a status message with the file it is about, keeping the code.
absl::Status WithPath(const std::string& path, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(path, ": ", status.message()));
}

// Parses one whole model from `in` under `recursion_limit` (protobuf's own log silenced: a
// refusal is ours to word). The coded stream is gone on return, so `in` has taken back any
// bytes it had buffered past the message.
bool ParseCoded(google::protobuf::io::ZeroCopyInputStream* in, int recursion_limit,
                onnx::ModelProto* proto) {
  google::protobuf::LogSilencer silence;
  google::protobuf::io::CodedInputStream coded(in);
  coded.SetTotalBytesLimit(INT_MAX);
  coded.SetRecursionLimit(recursion_limit);
  proto->Clear();
  return proto->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

// A model file, read through the descriptor that was checked. Not mmap: a file truncated by
// another process while mapped turns the next page access into SIGBUS (issue 14); read()
// returns short instead, which is refused with one line. The binary form is parsed straight
// from the descriptor in 1 MiB reads: holding the whole file while the model is built from it
// added the file's size to load's peak (61 MiB on the 1M-node synthetic model).
class ModelFile {
 public:
  ModelFile() = default;
  ModelFile(const ModelFile&) = delete;
  ModelFile& operator=(const ModelFile&) = delete;
  ~ModelFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  absl::Status Open(const std::string& path, int64_t max_bytes, Model* identity = nullptr) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0) {
      if (errno == ENOENT) return absl::NotFoundError("no such file");
      return absl::InvalidArgumentError(absl::StrCat("cannot open: ", Errno()));
    }
    struct stat st;
    if (::fstat(fd_, &st) != 0) return absl::InvalidArgumentError(Errno());
    if (S_ISDIR(st.st_mode)) return absl::InvalidArgumentError("is a directory, not a model");
    if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError("is not a regular file");
    if (st.st_size == 0) {
      // Protobuf would accept zero bytes as an empty ModelProto.
      return absl::InvalidArgumentError("empty file, not an ONNX model");
    }
    if (st.st_size > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("file is ", st.st_size, " bytes, more than the limit of ", max_bytes));
    }
    if (identity != nullptr) {
      identity->file_dev = st.st_dev;
      identity->file_ino = st.st_ino;
    }
    size_ = static_cast<size_t>(st.st_size);
    return absl::OkStatus();
  }

  // Reads the whole file into bytes() (the text form is parsed from memory).
  absl::Status Read() {
    // Uninitialized: read() is the first touch of every page (no zero-fill pass first).
    bytes_.reset(new char[size_]);
    size_t done = 0;
    while (done < size_) {
      const ssize_t n = ::read(fd_, bytes_.get() + done, size_ - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return absl::InvalidArgumentError(absl::StrCat("cannot read: ", Errno()));
      if (n == 0) return Shrank();
      done += static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }
  std::string_view bytes() const { return {bytes_.get(), size_}; }

  // Parses the file's first size() bytes (a file grown since Open is read no further) into
  // `proto` under `recursion_limit`. False when they are no valid model; a file that could
  // not be read whole also sets `read_error`.
  bool Parse(int recursion_limit, onnx::ModelProto* proto, absl::Status* read_error) {
    if (::lseek(fd_, 0, SEEK_SET) != 0) {
      *read_error = absl::InvalidArgumentError(absl::StrCat("cannot read: ", Errno()));
      return false;
    }
    google::protobuf::io::FileInputStream file(fd_, kReadBytes);
    google::protobuf::io::LimitingInputStream limited(&file, static_cast<int64_t>(size_));
    // Unparsed bytes are handed back to `limited`, so ByteCount is what was parsed.
    const bool ok = ParseCoded(&limited, recursion_limit, proto);
    if (file.GetErrno() != 0) {
      *read_error =
          absl::InvalidArgumentError(absl::StrCat("cannot read: ", std::strerror(file.GetErrno())));
      return false;
    }
    // A parse that ran out of bytes early may still have ended on a field boundary; one that
    // failed, on bytes that were not there.
    struct stat st;
    if ((ok && static_cast<size_t>(limited.ByteCount()) < size_) ||
        (!ok && ::fstat(fd_, &st) == 0 && static_cast<size_t>(st.st_size) < size_)) {
      *read_error = Shrank();
      return false;
    }
    return ok;
  }

 private:
  static constexpr int kReadBytes = 1 << 20;

  static absl::Status Shrank() {
    return absl::InvalidArgumentError(
        "the file shrank while it was read (changed by another process?)");
  }

  int fd_ = -1;
  size_t size_ = 0;
  std::unique_ptr<char[]> bytes_;
};

bool ParseWithLimit(std::string_view bytes, int recursion_limit, onnx::ModelProto* proto) {
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  return ParseCoded(&stream, recursion_limit, proto);
}

// Where a validated item sits ("graph 'g' node 'n' (Add) attribute 'value'"), as pieces that
// are joined only when a message needs them: load stays free of per-node string building.
struct Where {
  const Where* parent = nullptr;
  std::string_view pieces[5];

  std::string Text() const {
    std::string text = parent != nullptr ? parent->Text() : std::string();
    for (std::string_view p : pieces) text.append(p.data(), p.size());
    return text;
  }
};

// Walks the whole model (subgraphs and functions included) checking what load promises.
class Validator {
 public:
  Validator(const Model& model, const Limits& limits) : model_(model), limits_(limits) {}

  absl::Status Run() {
    const onnx::ModelProto& m = model_.proto;
    if (m.ir_version() <= 0) {
      return absl::InvalidArgumentError(
          "not an ONNX model: no ir_version (random or foreign bytes?)");
    }
    if (!m.has_graph()) return absl::InvalidArgumentError("model has no graph");
    std::set<std::string> domains;
    for (const auto& opset : m.opset_import()) {
      const std::string domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
      if (!domains.insert(domain).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "opset domain '", domain, "' is imported twice (corrupt or concatenated models)"));
      }
    }
    if (m.ir_version() >= 3 && domains.empty()) {
      return absl::InvalidArgumentError("model imports no opset (truncated file?)");
    }
    if (absl::Status s = Graph(m.graph(), Where{nullptr, {"graph '", m.graph().name(), "'"}});
        !s.ok()) {
      return s;
    }
    for (const auto& fn : m.functions()) {
      const Where where{nullptr, {"function '", fn.domain(), ".", fn.name(), "'"}};
      for (const auto& node : fn.node()) {
        BCAST_RETURN_IF_ERROR(Node(node, where));
      }
    }
    // Training graphs carry tensors (and external data) like the main graph.
    for (const auto& info : m.training_info()) {
      if (info.has_initialization()) {
        const Where where{
            nullptr, {"training_info initialization graph '", info.initialization().name(), "'"}};
        BCAST_RETURN_IF_ERROR(Graph(info.initialization(), where));
      }
      if (info.has_algorithm()) {
        const Where where{nullptr,
                          {"training_info algorithm graph '", info.algorithm().name(), "'"}};
        BCAST_RETURN_IF_ERROR(Graph(info.algorithm(), where));
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Graph(const onnx::GraphProto& g, const Where& where) {
    for (const auto& t : g.initializer()) {
      BCAST_RETURN_IF_ERROR(Tensor(t, Where{&where, {" initializer"}}));
    }
    for (const auto& st : g.sparse_initializer()) {
      if (absl::Status s = Sparse(st, Where{&where, {" sparse initializer"}}); !s.ok()) {
        return s;
      }
    }
    const std::pair<const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>*, const char*>
        lists[] = {
            {&g.input(), " input '"}, {&g.output(), " output '"}, {&g.value_info(), " value '"}};
    for (const auto& [list, kind] : lists) {
      for (const auto& vi : *list) {
        if (absl::Status s = Type(vi.type(), Where{&where, {kind, vi.name(), "'"}}); !s.ok()) {
          return s;
        }
      }
    }
    for (const auto& node : g.node()) {
      BCAST_RETURN_IF_ERROR(Node(node, where));
    }
    return absl::OkStatus();
  }

  absl::Status Node(const onnx::NodeProto& node, const Where& where) {
    if (++nodes_ > limits_.max_nodes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("model has more than the limit of ", limits_.max_nodes, " nodes"));
    }
    const Where here{&where, {" node '", node.name(), "' (", node.op_type(), ")"}};
    for (const auto& attr : node.attribute()) {
      const Where at{&here, {" attribute '", attr.name(), "'"}};
      if (attr.has_t()) {
        BCAST_RETURN_IF_ERROR(Tensor(attr.t(), at));
      }
      for (const auto& t : attr.tensors()) {
        BCAST_RETURN_IF_ERROR(Tensor(t, at));
      }
      if (attr.has_sparse_tensor()) {
        BCAST_RETURN_IF_ERROR(Sparse(attr.sparse_tensor(), at));
      }
      if (attr.has_g()) {
        BCAST_RETURN_IF_ERROR(Graph(attr.g(), at));
      }
      for (const auto& g : attr.graphs()) {
        BCAST_RETURN_IF_ERROR(Graph(g, at));
      }
    }
    return absl::OkStatus();
  }

  // Declared dims: none negative, and the known ones multiply within int64 (unless one is 0),
  // so no layer computes with a wrapped element count (check's analysis did, and accepted
  // the model). Element types of sequences, optionals and maps are checked alike.
  absl::Status Type(const onnx::TypeProto& type, const Where& where) {
    const onnx::TensorShapeProto* shape =
        type.has_tensor_type() && type.tensor_type().has_shape() ? &type.tensor_type().shape()
        : type.has_sparse_tensor_type() && type.sparse_tensor_type().has_shape()
            ? &type.sparse_tensor_type().shape()
            : nullptr;
    if (shape != nullptr) {
      int64_t product = 1;
      bool overflow = false, zero = false;
      for (const auto& dim : shape->dim()) {
        if (!dim.has_dim_value()) continue;
        if (dim.dim_value() < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(where.Text(), " has negative dim ", dim.dim_value()));
        }
        zero = zero || dim.dim_value() == 0;
        overflow = overflow || __builtin_mul_overflow(product, dim.dim_value(), &product);
      }
      if (overflow && !zero) {
        std::vector<std::string> dims;
        for (const auto& dim : shape->dim()) {
          dims.push_back(dim.has_dim_value()   ? absl::StrCat(dim.dim_value())
                         : dim.has_dim_param() ? dim.dim_param()
                                               : std::string("?"));
        }
        return absl::InvalidArgumentError(absl::StrCat(where.Text(), " has dims [",
                                                       absl::StrJoin(dims, ","),
                                                       "] whose product overflows int64"));
      }
    }
    if (type.has_sequence_type()) return Type(type.sequence_type().elem_type(), where);
    if (type.has_optional_type()) return Type(type.optional_type().elem_type(), where);
    if (type.has_map_type()) return Type(type.map_type().value_type(), where);
    return absl::OkStatus();
  }

  absl::Status Sparse(const onnx::SparseTensorProto& st, const Where& where) {
    BCAST_RETURN_IF_ERROR(Tensor(st.values(), where));
    return Tensor(st.indices(), where);
  }

  absl::Status Tensor(const onnx::TensorProto& t, const Where& where) {
    absl::StatusOr<int64_t> count = CheckedElementCount(t, limits_.max_tensor_elements);
    if (!count.ok()) {
      return absl::Status(count.status().code(),
                          absl::StrCat(where.Text(), " ", count.status().message()));
    }
    if (t.has_segment()) return absl::OkStatus();  // a chunk of a larger tensor
    const int32_t type = t.data_type();
    const int bits = ElementBits(type);
    auto name = [&] { return absl::StrCat(where.Text(), " '", t.name(), "' ", DimsToString(t)); };
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      absl::StatusOr<ExternalRef> ref = ResolveExternalData(t, model_.base_dir);
      if (!ref.ok()) {
        return absl::Status(ref.status().code(),
                            absl::StrCat(where.Text(), " ", ref.status().message()));
      }
      if (bits > 0 && ref->length != RawByteSize(type, *count)) {
        return absl::InvalidArgumentError(absl::StrCat(name(), ": external data has ", ref->length,
                                                       " bytes, dims need ",
                                                       RawByteSize(type, *count)));
      }
      return absl::OkStatus();
    }
    if (t.has_raw_data()) {
      if (type == onnx::TensorProto::STRING) {
        return absl::InvalidArgumentError(absl::StrCat(name(), ": STRING tensor with raw_data"));
      }
      if (bits > 0 && static_cast<int64_t>(t.raw_data().size()) != RawByteSize(type, *count)) {
        return absl::InvalidArgumentError(absl::StrCat(name(), ": payload has ",
                                                       t.raw_data().size(), " bytes, dims need ",
                                                       RawByteSize(type, *count)));
      }
      return absl::OkStatus();
    }
    using T = onnx::TensorProto;
    // Types of unknown width (bits 0) have no count to check, except STRING.
    const int64_t have = bits > 0 || type == T::STRING ? TypedFieldSize(t, type) : -1;
    int64_t want = *count;
    if (type == T::COMPLEX64 || type == T::COMPLEX128) want = 2 * *count;
    if (bits == 4) want = (*count + 1) / 2;  // packed 4-bit types: two per int32 element
    if (have >= 0 && have != want) {
      return absl::InvalidArgumentError(
          absl::StrCat(name(), ": payload has ", have, " values, dims need ", want));
    }
    return absl::OkStatus();
  }

  const Model& model_;
  const Limits& limits_;
  int64_t nodes_ = 0;
};

}  // namespace

Model FragmentModel(const Model& model, const std::string& graph_name, int64_t min_ir) {
  Model fragment;
  fragment.path = model.path;
  fragment.base_dir = model.base_dir;
  onnx::ModelProto& m = fragment.proto;
  m.set_ir_version(std::max<int64_t>(model.proto.ir_version(), min_ir));
  *m.mutable_opset_import() = model.proto.opset_import();
  m.mutable_graph()->set_name(graph_name);
  return fragment;
}

// Shared with onnx_text.cc: every load path ends with the same validation.
absl::StatusOr<Model> FinishLoad(Model model, const Limits& limits) {
  if (absl::Status s = ValidateModel(model, limits); !s.ok()) return WithPath(model.path, s);
  return model;
}

namespace {

// Parses `proto` with `parse` (false: no valid model; an error: the bytes could not be read)
// under limits.max_nesting; a failure tells a model nested too deep apart from a corrupt one
// by retrying with a larger (still bounded) limit. Messages start with `label`.
absl::Status ParseWithin(
    const std::string& label, const Limits& limits, onnx::ModelProto* proto,
    const std::function<absl::StatusOr<bool>(int limit, onnx::ModelProto* proto)>& parse) {
  absl::StatusOr<bool> ok = parse(limits.max_nesting, proto);
  if (!ok.ok()) return WithPath(label, ok.status());
  if (*ok) return absl::OkStatus();
  onnx::ModelProto probe;
  ok = parse(std::max(limits.max_nesting * 4, 400), &probe);
  if (!ok.ok()) return WithPath(label, ok.status());
  if (*ok) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": messages nested deeper than the limit of ", limits.max_nesting));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      label, ": not a valid ONNX model (protobuf parse failed: truncated or corrupt data)"));
}

}  // namespace

absl::StatusOr<Model> ParseModelBytes(std::string_view bytes, const std::string& label,
                                      const std::string& base_dir, const Limits& limits) {
  Model model;
  model.path = label;
  model.base_dir = base_dir;
  if (bytes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": empty file, not an ONNX model"));
  }
  if (static_cast<int64_t>(bytes.size()) > limits.max_file_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(label, ": model is ", bytes.size(),
                                                     " bytes, more than the limit of ",
                                                     limits.max_file_bytes));
  }
  BCAST_RETURN_IF_ERROR(ParseWithin(
      label, limits, &model.proto, [&](int limit, onnx::ModelProto* proto) -> absl::StatusOr<bool> {
        return ParseWithLimit(bytes, limit, proto);
      }));
  return FinishLoad(std::move(model), limits);
}

namespace {

// ParseModelBytes on a file, read as it is parsed (see ModelFile).
absl::StatusOr<Model> ParseModelFile(ModelFile* file, const std::string& path,
                                     const Limits& limits) {
  Model model;
  model.path = path;
  model.base_dir = DirName(path);
  BCAST_RETURN_IF_ERROR(ParseWithin(
      path, limits, &model.proto, [&](int limit, onnx::ModelProto* proto) -> absl::StatusOr<bool> {
        absl::Status read_error;
        const bool ok = file->Parse(limit, proto, &read_error);
        if (!read_error.ok()) return read_error;
        return ok;
      }));
  return FinishLoad(std::move(model), limits);
}

}  // namespace

absl::StatusOr<Model> LoadModel(const std::string& path, const Limits& limits) {
  Model identity;
  ModelFile file;
  if (absl::Status s = file.Open(path, limits.max_file_bytes, &identity); !s.ok()) {
    return WithPath(path, s);
  }
  absl::StatusOr<Model> model;
  if (absl::EndsWith(path, ".onnxtxt")) {
    if (absl::Status s = file.Read(); !s.ok()) return WithPath(path, s);
    model = ParseModelText(file.bytes(), path, DirName(path), limits);
  } else {
    model = ParseModelFile(&file, path, limits);
  }
  if (model.ok()) {
    model->file_dev = identity.file_dev;
    model->file_ino = identity.file_ino;
  }
  return model;
}

namespace {

// The name of the first tensor whose payload lives in external data, or "" when none does:
// what a stream, having no folder, can neither read nor write.
std::string FirstExternalTensor(const onnx::ModelProto& proto) {
  std::string name;
  // ForEachModelTensor walks a mutable model; this walk only reads.
  ForEachModelTensor(const_cast<onnx::ModelProto*>(&proto), [&name](onnx::TensorProto* t) {
    if (name.empty() && t->data_location() == onnx::TensorProto::EXTERNAL) name = t->name();
  });
  return name;
}

}  // namespace

absl::StatusOr<Model> LoadModelStream(int fd, const std::string& label, const Limits& limits) {
  // Read to EOF in growing chunks, never more than the file-size limit allows.
  std::string bytes;
  constexpr size_t kChunk = size_t{1} << 20;
  for (;;) {
    const size_t have = bytes.size();
    if (static_cast<int64_t>(have) > limits.max_file_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          label, ": more than the limit of ", limits.max_file_bytes, " bytes (--max-file-bytes)"));
    }
    bytes.resize(have + kChunk);
    const ssize_t n = ::read(fd, bytes.data() + have, kChunk);
    if (n < 0 && errno == EINTR) {
      bytes.resize(have);
      continue;
    }
    if (n < 0) return absl::InvalidArgumentError(absl::StrCat(label, ": cannot read: ", Errno()));
    bytes.resize(have + static_cast<size_t>(n));
    if (n == 0) break;
  }
  if (bytes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": empty input, not an ONNX model"));
  }
  // A stream has no folder: a location would be resolved against whatever directory we run
  // in, which the model's author did not choose. Only a file's own folder is trusted, so a
  // reference to external data is refused before validation would open anything.
  auto refuse = [&label](const std::string& tensor) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": tensor '", tensor,
                     "' keeps its payload in external data, which a model read from a stream "
                     "cannot reference; give the model's path"));
  };
  // ONNX text form opens with '<' (after blanks); a binary model opens with a field tag.
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  const bool text = first != std::string::npos && bytes[first] == '<';
  if (!text) {
    onnx::ModelProto probe;  // a bad parse is left to ParseModelBytes to explain
    if (ParseWithLimit(bytes, limits.max_nesting, &probe)) {
      if (std::string t = FirstExternalTensor(probe); !t.empty()) return refuse(t);
    }
  }
  BCAST_ASSIGN_OR_RETURN(Model model, text ? ParseModelText(bytes, label, ".", limits)
                                           : ParseModelBytes(bytes, label, ".", limits));
  if (std::string t = FirstExternalTensor(model.proto); !t.empty()) return refuse(t);
  return model;
}

absl::StatusOr<std::string> SerializeForStream(const Model& model) {
  if (const std::string external = FirstExternalTensor(model.proto); !external.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("tensor '", external,
                     "' keeps its payload in external data, which cannot go to a stream; "
                     "write the model to a file"));
  }
  return SerializeModel(model.proto);
}

absl::Status ValidateModel(const Model& model, const Limits& limits) {
  return Validator(model, limits).Run();
}

absl::Status SerializeModelTo(const onnx::ModelProto& model,
                              google::protobuf::io::ZeroCopyOutputStream* out) {
  // One size pass: SerializeWithCachedSizes reuses the sizes it leaves.
  if (model.ByteSizeLong() > static_cast<size_t>(INT_MAX)) {
    return absl::ResourceExhaustedError("model of 2 GiB or more needs external data");
  }
  google::protobuf::io::CodedOutputStream coded(out);
  coded.SetSerializationDeterministic(true);
  model.SerializeWithCachedSizes(&coded);
  return coded.HadError() ? absl::InternalError("protobuf serialization failed") : absl::OkStatus();
}

absl::StatusOr<std::string> SerializeModel(const onnx::ModelProto& model) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    BCAST_RETURN_IF_ERROR(SerializeModelTo(model, &stream));
  }
  return out;
}

absl::StatusOr<std::string> SerializeSelfContained(const Model& model) {
  bool external = false;
  onnx::ModelProto copy = model.proto;
  absl::Status status;
  ForEachModelTensor(&copy, [&](onnx::TensorProto* t) {
    if (!status.ok() || t->data_location() != onnx::TensorProto::EXTERNAL) return;
    external = true;
    absl::StatusOr<std::string> bytes = ReadRawBytes(*t, model.base_dir, int64_t{2} << 30);
    if (!bytes.ok()) {
      status = bytes.status();
      return;
    }
    t->clear_external_data();
    t->set_data_location(onnx::TensorProto::DEFAULT);
    t->set_raw_data(*std::move(bytes));
  });
  BCAST_RETURN_IF_ERROR(status);
  return SerializeModel(external ? copy : model.proto);
}

bool ModelsEqual(const onnx::ModelProto& a, const onnx::ModelProto& b, std::string* diff) {
  google::protobuf::util::MessageDifferencer differ;
  std::string report;
  if (diff != nullptr) differ.ReportDifferencesToString(&report);
  const bool equal = differ.Compare(a, b);
  if (diff != nullptr) *diff = report;
  return equal;
}

}  // namespace onnx_bcast::proto
