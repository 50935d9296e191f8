#include "backend/kubernetes/client/api_json.h"

#include <utility>
#include <vector>

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;

// nlohmann's SAX events, built into a DOM as its own parser does (and faster), except that
// Kubernetes objects' metadata.managedFields can be read past unbuilt and, for a List, each
// completed element of the top-level "items" array is moved out and handed over at once.
class ApiJsonBuilder {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  // `object_depth`: how many containers are open, the object's own included, inside a Kubernetes
  // object: 3 for a List's items (the List, "items", the item), 2 for a watch event's "object".
  // `on_item` may be null: nothing is handed over.
  ApiJsonBuilder(const ListItemHandler* on_item, std::size_t object_depth, bool drop_managed_fields)
      : on_item_(on_item), object_depth_(object_depth), drop_managed_fields_(drop_managed_fields) {}

  bool null() { return SkipScalar() || Scalar(Json(nullptr)); }
  bool boolean(bool v) { return SkipScalar() || Scalar(Json(v)); }
  bool number_integer(number_integer_t v) { return SkipScalar() || Scalar(Json(v)); }
  bool number_unsigned(number_unsigned_t v) { return SkipScalar() || Scalar(Json(v)); }
  bool number_float(number_float_t v, const string_t&) { return SkipScalar() || Scalar(Json(v)); }
  bool string(string_t& v) { return SkipScalar() || Scalar(Json(std::move(v))); }
  bool binary(binary_t& v) { return SkipScalar() || Scalar(Json::binary(std::move(v))); }
  bool key(string_t& k) {
    if (skipping_) return true;
    key_ = std::move(k);
    // metadata.managedFields of an item: its value is read past, never built.
    skipping_ = drop_managed_fields_ && stack_.size() == object_depth_ + 1 && in_metadata_ &&
                key_ == "managedFields";
    return true;
  }
  bool start_object(std::size_t) { return Open(Json::object()); }
  bool start_array(std::size_t) { return Open(Json::array()); }
  bool end_object() { return End(); }
  bool end_array() { return End(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    error_ = "at byte " + std::to_string(position) + ": " + e.what();
    return false;
  }

  Json& root() { return root_; }
  const std::string& error() const { return error_; }

 private:
  // Places a value where the parse is: the root, the next element of an array, or the value of
  // the last key of an object. Pointers into arrays stay valid: an array grows only after the
  // element on the stack above it has ended.
  Json* Insert(Json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(value));
      return &top.back();
    }
    Json& slot = top[key_];
    slot = std::move(value);
    return &slot;
  }
  // True when this scalar belongs to a skipped value (and ends it when it is the whole value).
  bool SkipScalar() {
    if (!skipping_) return false;
    if (skip_depth_ == 0) skipping_ = false;
    return true;
  }
  bool Scalar(Json value) {
    Insert(std::move(value));
    Deliver();
    return true;
  }
  bool Open(Json container) {
    if (skipping_) {  // the skipped value, or a container inside it
      ++skip_depth_;
      return true;
    }
    const bool items =
        on_item_ != nullptr && stack_.size() == 1 && container.is_array() && key_ == "items";
    const bool metadata =
        stack_.size() == object_depth_ && container.is_object() && key_ == "metadata";
    Json* opened = Insert(std::move(container));
    if (items) items_ = opened;
    if (stack_.size() == object_depth_) in_metadata_ = metadata;  // the object's child now open
    stack_.push_back(opened);
    return true;
  }
  bool End() {
    if (skipping_) {
      if (--skip_depth_ == 0) skipping_ = false;  // the skipped value ended
      return true;
    }
    stack_.pop_back();
    Deliver();
    return true;
  }
  // An element of "items" just completed: hand it over.
  void Deliver() {
    if (items_ == nullptr || stack_.size() != 2 || stack_.back() != items_) return;
    Json::array_t& items = items_->get_ref<Json::array_t&>();
    Json item = std::move(items.back());
    items.pop_back();
    (*on_item_)(std::move(item));
  }

  const ListItemHandler* const on_item_;
  const std::size_t object_depth_;
  const bool drop_managed_fields_;
  bool skipping_ = false;     // the value of a dropped key is being read past
  int skip_depth_ = 0;        // containers of it open
  bool in_metadata_ = false;  // the open child of the current item is its "metadata"
  Json root_;
  std::vector<Json*> stack_;  // the open objects and arrays, root first
  std::string key_;           // the last key read
  Json* items_ = nullptr;     // the root's "items" array, once open
  std::string error_;
};

}  // namespace

Result<Json> ParseListStream(std::istream& in, const ListItemHandler& on_item,
                             const ListStreamOptions& options) {
  ApiJsonBuilder builder(&on_item, 3, options.drop_managed_fields);
  const bool ok = Json::sax_parse(in, &builder);
  if (!ok) return InvalidArgument("malformed JSON list " + builder.error());
  if (!builder.root().is_object()) return InvalidArgument("a JSON list must be an object");
  if (!builder.root().contains("items")) builder.root()["items"] = Json::array();
  return std::move(builder.root());
}

Result<Json> ParseApiJson(std::string_view text, std::size_t object_depth,
                          bool drop_managed_fields) {
  ApiJsonBuilder builder(nullptr, object_depth, drop_managed_fields);
  if (!Json::sax_parse(text.begin(), text.end(), &builder))
    return InvalidArgument("malformed JSON " + builder.error());
  return std::move(builder.root());
}

ResponseStreamBuf::int_type ResponseStreamBuf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (!error_.ok()) return traits_type::eof();
  Result<std::string> bytes = stream_->ReadSome(idle_timeout_);
  if (!bytes.ok()) {
    error_ = bytes.status();
    return traits_type::eof();
  }
  if (bytes->empty()) return traits_type::eof();
  chunk_ = std::move(*bytes);
  setg(chunk_.data(), chunk_.data(), chunk_.data() + chunk_.size());
  return traits_type::to_int_type(*gptr());
}

}  // namespace lockstep::kube
