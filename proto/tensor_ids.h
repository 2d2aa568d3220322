// Dense ids for the tensor names of a graph: each name is copied once into blocks that never
// move and gets the next integer, so per-tensor tables can be vectors indexed by id instead of
// string-keyed hash maps each holding its own copy of every name. On a million-node graph
// those maps were the largest allocations after the model itself (docs/performance-graph.md).
// The lookup table holds ids only (4 bytes a slot, hashed and compared through the names): a
// table of (name view, id) pairs took 52 MiB of a million-node graph's peak, this one 10.
#ifndef ONNX_BCAST_PROTO_TENSOR_IDS_H_
#define ONNX_BCAST_PROTO_TENSOR_IDS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"

namespace onnx_bcast::proto {

class TensorIds {
 public:
  TensorIds();
  /// A moved-from space is empty (Find answers -1) and interns anew.
  TensorIds(TensorIds&&) noexcept = default;
  TensorIds& operator=(TensorIds&&) noexcept = default;
  /// Copies intern every name again (the keys must point into the copy's own blocks).
  TensorIds(const TensorIds& other);
  TensorIds& operator=(const TensorIds& other);

  /// The id of `name`, or -1 when it was never interned.
  int Find(std::string_view name) const {
    auto it = ids_.find(name);
    return it == ids_.end() ? -1 : *it;
  }
  /// `id` when it is an id of this space named `name` (a hint that still holds), else -1.
  int Confirm(int id, std::string_view name) const {
    return id >= 0 && id < size() && this->name(id) == name ? id : -1;
  }
  /// The id of `name`, given the next one (size()) on first sight.
  int Intern(std::string_view name);
  /// The name of `id` (0 <= id < size()).
  std::string_view name(int id) const { return View((*names_)[static_cast<size_t>(id)]); }
  int size() const { return names_ == nullptr ? 0 : static_cast<int>(names_->size()); }
  /// Room for `n` names without rehashing.
  void Reserve(size_t n);

 private:
  // Each name is kept as its length (4 bytes) then its bytes; the list points at them (8 bytes
  // a name where a string_view took 16).
  using Names = std::vector<const char*>;
  static std::string_view View(const char* kept) {
    uint32_t size;
    std::memcpy(&size, kept, sizeof(size));
    return {kept + sizeof(size), size};
  }
  // An id hashes and compares as its name, so the table finds ids by name. The functors point
  // at the names through the heap (names_), which a move hands over with the table.
  struct Hash {
    using is_transparent = void;
    const Names* names;
    size_t operator()(std::string_view name) const { return absl::Hash<std::string_view>()(name); }
    size_t operator()(int id) const { return (*this)(View((*names)[static_cast<size_t>(id)])); }
  };
  struct Eq {
    using is_transparent = void;
    const Names* names;
    std::string_view Of(std::string_view name) const { return name; }
    std::string_view Of(int id) const { return View((*names)[static_cast<size_t>(id)]); }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Of(a) == Of(b);
    }
  };
  using Table = absl::flat_hash_set<int, Hash, Eq>;

  // Empties the space (also what a moved-from one needs before its next Intern).
  void Init();
  // `name` copied into the blocks (see Names).
  const char* Keep(std::string_view name);

  std::unique_ptr<Names> names_;  // null only after a move
  Table ids_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* free_ = nullptr;
  size_t left_ = 0;
};

/// The tensor ids of each node of one graph in a TensorIds space, resolved once by whoever
/// walked the graph first (the analysis) so the next walk (a use-def index) need not hash
/// every name again: node i's inputs, then its outputs, are ids[begin[i] .. begin[i + 1]),
/// -1 for an empty name. Only a hint: the graph may have changed since, so a reader compares
/// each id's name with the node's before using it.
struct NodeTensorIds {
  std::vector<int> begin;
  std::vector<int> ids;

  /// Node `node`'s ids (`size` of them: its inputs plus outputs) in a graph of `node_count`
  /// nodes, or null when this hint describes another node list.
  const int* Of(int node, int node_count, int size) const {
    if (begin.size() != static_cast<size_t>(node_count) + 1 ||
        begin.back() != static_cast<int>(ids.size()) || node < 0 || node >= node_count) {
      return nullptr;
    }
    const size_t i = static_cast<size_t>(node);
    return begin[i + 1] - begin[i] == size ? ids.data() + begin[i] : nullptr;
  }
};

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_TENSOR_IDS_H_
