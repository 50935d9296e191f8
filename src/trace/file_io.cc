// Reading whole files for the spec readers, gunzipping where the name says so.
#include "trace/chunk_reader.h"
#include "trace/trace.h"

namespace lockstep::trace {

Result<std::string> ReadFileMaybeGzip(const std::string& path) {
  Result<internal::ChunkReader> reader = internal::ChunkReader::Open(path);
  if (!reader.ok()) return reader.status();
  std::string out;
  out.reserve(reader->size_hint());
  while (true) {
    Result<std::string_view> chunk = reader->Next();
    if (!chunk.ok()) return chunk.status();
    if (chunk->empty()) return out;
    out.append(*chunk);
  }
}

}  // namespace lockstep::trace
