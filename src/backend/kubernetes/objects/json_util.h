// Small readers over apiserver JSON objects, shared by the mapping files of this folder. Each
// returns an empty value when a field is absent or of another type: the apiserver omits empty
// fields, so absence is normal. Internal to lockstep_kube_objects.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace lockstep::kube::internal {

using Json = nlohmann::json;

// obj[key] when obj is an object that has key, else nullptr.
inline const Json* Child(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// obj[key], or a null value when absent: for reading optional fields and lists in place.
inline const Json& ChildOrNull(const Json& obj, std::string_view key) {
  static const Json kNull;
  const Json* c = Child(obj, key);
  return c ? *c : kNull;
}

// obj[k1][k2]... as above.
template <typename... Keys>
const Json* Path(const Json& obj, std::string_view key, Keys... rest) {
  const Json* c = Child(obj, key);
  if constexpr (sizeof...(rest) == 0) {
    return c;
  } else {
    return c ? Path(*c, rest...) : nullptr;
  }
}

inline std::string String(const Json* value) {
  return value && value->is_string() ? value->get<std::string>() : std::string();
}

template <typename... Keys>
std::string StringAt(const Json& obj, std::string_view key, Keys... rest) {
  return String(Path(obj, key, rest...));
}

inline std::optional<std::int64_t> Integer(const Json* value) {
  if (!value || !value->is_number_integer()) return std::nullopt;
  return value->get<std::int64_t>();
}

// metadata.labels[key] / metadata.annotations[key], nullopt when absent.
inline std::optional<std::string> Label(const Json& obj, std::string_view key) {
  const Json* v = Path(obj, "metadata", "labels", key);
  if (!v || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}
inline std::optional<std::string> Annotation(const Json& obj, std::string_view key) {
  const Json* v = Path(obj, "metadata", "annotations", key);
  if (!v || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

// "pod ns/name" or "node name", for error messages.
inline std::string Describe(const Json& obj, std::string_view kind) {
  std::string ns = StringAt(obj, "metadata", "namespace");
  std::string name = StringAt(obj, "metadata", "name");
  if (name.empty()) name = "<unnamed>";
  return std::string(kind) + " " + (ns.empty() ? name : ns + "/" + name);
}

}  // namespace lockstep::kube::internal
