// The main graph's shapes and element types, per tensor, over dense ids: what the pass manager
// keeps between passes (analysis_manager.h), what RewriteContext edits and the target check
// reads. Names are interned once (proto/tensor_ids.h); each table is a vector by id. Two
// string-keyed hash maps (shapes, element types) took 222 MiB for the 1M-node benchmark.
#ifndef ONNX_BCAST_ANALYSIS_SHAPE_TABLES_H_
#define ONNX_BCAST_ANALYSIS_SHAPE_TABLES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "broadcast/shape.h"
#include "proto/tensor_ids.h"

namespace onnx_bcast::analysis {

class ShapeTables {
 public:
  /// The recorded shape of `name`, or null when none is (not "unknown rank": absent). Valid
  /// as long as these tables or a copy of them live.
  const broadcast::Shape* FindShape(std::string_view name) const {
    const size_t id = Index(name);
    return id < shapes_.size() ? shapes_[id] : nullptr;
  }
  /// The shape of tensor `id` of this id space, or null.
  const broadcast::Shape* FindShapeById(int id) const {
    const size_t i = static_cast<size_t>(id);
    return id >= 0 && i < shapes_.size() ? shapes_[i] : nullptr;
  }
  /// The element type of `name`; 0 when not known.
  int32_t ElemOf(std::string_view name) const {
    const size_t id = Index(name);
    return id < elems_.size() ? elems_[id] : 0;
  }
  void SetShape(std::string_view name, broadcast::Shape shape) {
    const size_t id = Slot(name);
    shapes_[id] = Pool().Intern(std::move(shape));
  }
  /// Records `elem` (0 forgets it).
  void SetElem(std::string_view name, int32_t elem) { elems_[Slot(name)] = elem; }
  /// Forgets every element type (a body's are not tracked; see AnalysisManager).
  void ClearElems() { std::fill(elems_.begin(), elems_.end(), 0); }
  void EraseShape(std::string_view name) {
    const size_t id = Index(name);
    if (id < shapes_.size()) shapes_[id] = nullptr;
  }

  /// fn(name, shape) for every recorded shape, in id order (first recorded first).
  template <typename Fn>
  void ForEachShape(const Fn& fn) const {
    for (size_t id = 0; id < shapes_.size(); ++id) {
      if (shapes_[id] != nullptr) fn(ids_.name(static_cast<int>(id)), *shapes_[id]);
    }
  }
  /// fn(name, elem) for every known element type, in id order.
  template <typename Fn>
  void ForEachElem(const Fn& fn) const {
    for (size_t id = 0; id < elems_.size(); ++id) {
      if (elems_[id] != 0) fn(ids_.name(static_cast<int>(id)), elems_[id]);
    }
  }
  /// Records tensor `id` of an id space whose names arrive later (AdoptIds): the analysis
  /// fills the tables by its own ids while it walks and hands over its names at the end.
  void Record(int id, broadcast::Shape shape, int32_t elem) {
    const size_t i = static_cast<size_t>(id);
    Grow(i + 1);
    shapes_[i] = Pool().Intern(std::move(shape));
    elems_[i] = elem;
  }
  /// The names of the ids Record used (tables filled only by Record until now).
  void AdoptIds(proto::TensorIds ids) {
    ids_ = std::move(ids);
    Grow(static_cast<size_t>(ids_.size()));
  }
  /// The ids the analysis resolved for each main-graph node (see proto::NodeTensorIds), for
  /// the first use-def index built over these tables; taken once, since edits outdate it.
  void AdoptNodeIds(proto::NodeTensorIds node_ids) { node_ids_ = std::move(node_ids); }
  proto::NodeTensorIds TakeNodeIds() { return std::exchange(node_ids_, {}); }
  const proto::NodeTensorIds& node_ids() const { return node_ids_; }
  const proto::TensorIds& ids() const { return ids_; }
  /// The id space, to share with a use-def index over the same graph (proto::GraphEditor):
  /// names interned there get ids here, with no shape until one is set.
  proto::TensorIds* mutable_ids() { return &ids_; }
  /// Room for `n` tensors.
  void Reserve(size_t n) {
    ids_.Reserve(n);
    shapes_.reserve(n);
    elems_.reserve(n);
  }

 private:
  proto::NodeTensorIds node_ids_;
  // The id of `name`, or past the end when it has none.
  size_t Index(std::string_view name) const {
    const int id = ids_.Find(name);
    return id < 0 ? shapes_.size() : static_cast<size_t>(id);
  }
  // Ids may run ahead of the vectors when a sharer interned names (mutable_ids).
  size_t Slot(std::string_view name) {
    const size_t id = static_cast<size_t>(ids_.Intern(name));
    Grow(id + 1);
    return id;
  }
  // Room for ids below `n`, none of them with a shape or an element type yet.
  void Grow(size_t n) {
    if (n <= shapes_.size()) return;
    shapes_.resize(n, nullptr);
    elems_.resize(n, 0);
  }

  // Each distinct shape stored once. The tensors of a graph share few shapes ([N,C,H,W] through
  // a whole stage), and a shape per tensor (a dims vector each) was the largest part of the
  // tables at a million nodes. Append-only, so the pointers handed out stay valid; copies of
  // the tables share it.
  class ShapePool {
   public:
    const broadcast::Shape* Intern(broadcast::Shape shape) {
      if (auto it = index_.find(&shape); it != index_.end()) return *it;
      shapes_.push_back(std::move(shape));
      index_.insert(&shapes_.back());
      return &shapes_.back();
    }

   private:
    struct Hash {
      size_t operator()(const broadcast::Shape* s) const {
        if (!s->rank_known) return 0x9e3779b97f4a7c15ull;
        size_t h = s->dims.size();
        for (const broadcast::Dim& d : s->dims) {
          // Symbolic dims are hash-consed expressions: their node identifies them.
          const size_t x = d.is_symbolic() ? d.expr()->Hash() : static_cast<size_t>(d.value());
          h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        }
        return h;
      }
    };
    struct Eq {
      bool operator()(const broadcast::Shape* a, const broadcast::Shape* b) const { return *a == *b; }
    };
    std::deque<broadcast::Shape> shapes_;
    absl::flat_hash_set<const broadcast::Shape*, Hash, Eq> index_;
  };

  // Made on first use (a moved-from table gets a new one).
  ShapePool& Pool() {
    if (pool_ == nullptr) pool_ = std::make_shared<ShapePool>();
    return *pool_;
  }

  proto::TensorIds ids_;
  std::shared_ptr<ShapePool> pool_;
  std::vector<const broadcast::Shape*> shapes_;  // null: no shape recorded
  std::vector<int32_t> elems_;
};

}  // namespace onnx_bcast::analysis

#endif  // ONNX_BCAST_ANALYSIS_SHAPE_TABLES_H_
