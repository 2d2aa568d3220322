// Attribute accessors of runtime nodes.
#include "runtime/graph.h"

#include "absl/strings/str_cat.h"

namespace onnx_bcast::runtime {

const Attribute* Node::Find(const std::string& attr) const {
  auto it = attrs.find(attr);
  return it == attrs.end() ? nullptr : &it->second;
}

int64_t Node::GetInt(const std::string& attr, int64_t fallback) const {
  const Attribute* a = Find(attr);
  return a == nullptr ? fallback : a->i;
}

float Node::GetFloat(const std::string& attr, float fallback) const {
  const Attribute* a = Find(attr);
  return a == nullptr ? fallback : a->f;
}

std::string Node::GetString(const std::string& attr, const std::string& fallback) const {
  const Attribute* a = Find(attr);
  return a == nullptr ? fallback : a->s;
}

std::vector<int64_t> Node::GetInts(const std::string& attr, std::vector<int64_t> fallback) const {
  const Attribute* a = Find(attr);
  return a == nullptr ? fallback : a->ints;
}

std::vector<float> Node::GetFloats(const std::string& attr, std::vector<float> fallback) const {
  const Attribute* a = Find(attr);
  return a == nullptr ? fallback : a->floats;
}

std::vector<std::string> Node::GetStrings(const std::string& attr,
                                          std::vector<std::string> fallback) const {
  const Attribute* a = Find(attr);
  return a == nullptr ? fallback : a->strings;
}

std::string Node::Label() const { return absl::StrCat(op_type, " '", name, "'"); }

}  // namespace onnx_bcast::runtime
