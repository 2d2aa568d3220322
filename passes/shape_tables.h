// The main graph's shapes and element types, per tensor, over dense ids: what the pass manager
// keeps between passes (analysis_manager.h), what RewriteContext edits and the target check
// reads. Names are interned once (proto/tensor_ids.h); each table is a vector by id. Two
// string-keyed hash maps (shapes, element types) took 222 MiB for the 1M-node benchmark.
#ifndef ONNX_BCAST_PASSES_SHAPE_TABLES_H_
#define ONNX_BCAST_PASSES_SHAPE_TABLES_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string_view>
#include <utility>
#include <vector>

#include "broadcast/shape.h"
#include "proto/tensor_ids.h"

namespace onnx_bcast::passes {

class ShapeTables {
 public:
  /// The recorded shape of `name`, or null when none is (not "unknown rank": absent). Valid
  /// until that tensor's shape is set again.
  const bcast::Shape* FindShape(std::string_view name) const {
    const size_t id = Index(name);
    return id < has_shape_.size() && has_shape_[id] ? &shapes_[id] : nullptr;
  }
  /// The shape of tensor `id` of this id space, or null.
  const bcast::Shape* FindShapeById(int id) const {
    const size_t i = static_cast<size_t>(id);
    return id >= 0 && i < has_shape_.size() && has_shape_[i] ? &shapes_[i] : nullptr;
  }
  /// The element type of `name`; 0 when not known.
  int32_t ElemOf(std::string_view name) const {
    const size_t id = Index(name);
    return id < elems_.size() ? elems_[id] : 0;
  }
  void SetShape(std::string_view name, bcast::Shape shape) {
    const size_t id = Slot(name);
    shapes_[id] = std::move(shape);
    has_shape_[id] = true;
  }
  /// Records `elem` (0 forgets it).
  void SetElem(std::string_view name, int32_t elem) { elems_[Slot(name)] = elem; }
  void EraseShape(std::string_view name) {
    const size_t id = Index(name);
    if (id >= has_shape_.size()) return;
    has_shape_[id] = false;
    shapes_[id] = bcast::Shape::UnknownRank();
  }

  /// fn(name, shape) for every recorded shape, in id order (first recorded first).
  template <typename Fn>
  void ForEachShape(const Fn& fn) const {
    for (size_t id = 0; id < shapes_.size(); ++id) {
      if (has_shape_[id]) fn(ids_.name(static_cast<int>(id)), shapes_[id]);
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
  void Record(int id, bcast::Shape shape, int32_t elem) {
    const size_t i = static_cast<size_t>(id);
    Grow(i + 1);
    shapes_[i] = std::move(shape);
    has_shape_[i] = true;
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
    has_shape_.reserve(n);
    elems_.reserve(n);
  }

 private:
  proto::NodeTensorIds node_ids_;
  // The id of `name`, or past the end when it has none.
  size_t Index(std::string_view name) const {
    const int id = ids_.Find(name);
    return id < 0 ? has_shape_.size() : static_cast<size_t>(id);
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
    shapes_.resize(n, bcast::Shape::UnknownRank());
    has_shape_.resize(n, false);
    elems_.resize(n, 0);
  }

  proto::TensorIds ids_;
  // A deque: growing it leaves references to recorded shapes valid (RewriteContext::ShapeOf
  // hands them out while passes record new tensors).
  std::deque<bcast::Shape> shapes_;
  std::vector<bool> has_shape_;
  std::vector<int32_t> elems_;
};

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_SHAPE_TABLES_H_
