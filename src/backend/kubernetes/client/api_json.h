// Parsing the apiserver's JSON quickly. The DOM is built from nlohmann's SAX events (a third
// faster than nlohmann's own DOM parser), Kubernetes objects' metadata.managedFields can be read
// past without being built, and a List response (`{"kind": "PodList", "metadata": {...},
// "items": [...]}`) is read as it arrives: each element of "items" is handed over as soon as its
// closing brace is parsed, so the first of 10,000 pods are at work while the rest still arrive,
// and the body is never held whole in memory.
//
//   std::istringstream in(body);
//   Result<Json> list = ParseListStream(in, [&](Json item) { ... });
//   // *list: the List without its items: kind, apiVersion, metadata.resourceVersion, ...
#pragma once

#include <chrono>
#include <functional>
#include <istream>
#include <nlohmann/json.hpp>
#include <streambuf>
#include <string>
#include <string_view>

#include "backend/kubernetes/client/transport.h"
#include "common/status.h"

namespace lockstep::kube {

using ListItemHandler = std::function<void(nlohmann::json item)>;

struct ListStreamOptions {
  // Items' metadata.managedFields (server-side apply's bookkeeping, a third of a pod, read by
  // nobody here) are read past without being built, as client-go's transform functions drop them.
  bool drop_managed_fields = false;
};

// Parses a JSON List from `in`, calling `on_item` for each element of its top-level "items"
// array in order, on the calling thread. Returns the List with "items" empty. Malformed JSON is
// InvalidArgument naming the byte offset; an input that is not an object is too.
Result<nlohmann::json> ParseListStream(std::istream& in, const ListItemHandler& on_item,
                                       const ListStreamOptions& options = {});

// One JSON document, as nlohmann::json::parse gives it, but with metadata.managedFields of the
// Kubernetes object `object_depth` containers deep (1: the document is the object; 2: a watch
// event's "object") left out when `drop_managed_fields`. Malformed JSON is InvalidArgument
// naming the byte offset.
Result<nlohmann::json> ParseApiJson(std::string_view text, std::size_t object_depth,
                                    bool drop_managed_fields);

// A std::streambuf over a ResponseStream's body: each underflow reads the next chunk. A read
// error (network, timeout, cancel) ends the stream; error() then says why.
class ResponseStreamBuf : public std::streambuf {
 public:
  ResponseStreamBuf(ResponseStream* stream, std::chrono::milliseconds idle_timeout)
      : stream_(stream), idle_timeout_(idle_timeout) {}
  const Status& error() const { return error_; }

 protected:
  int_type underflow() override;

 private:
  ResponseStream* const stream_;  // not owned
  const std::chrono::milliseconds idle_timeout_;
  std::string chunk_;
  Status error_;
};

}  // namespace lockstep::kube
