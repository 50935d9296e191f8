// UTF-8 checks for text that crosses into JSON, whose strings must be UTF-8 (nlohmann's dump
// throws on anything else). "Well-formed" is Unicode's Table 3-7, as Go's unicode/utf8 reads it:
// no overlong forms, no surrogates, nothing above U+10FFFF.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace lockstep {

// The offset of the first byte of `text` that does not start a well-formed UTF-8 sequence, or
// nothing when all of `text` is UTF-8.
std::optional<std::size_t> FirstNonUtf8Byte(std::string_view text);

// `text` with every byte that does not start a well-formed sequence replaced by U+FFFD: what
// Go's encoding/json writes for such a string (so, the Kubernetes apiserver's JSON).
std::string CoercedToUtf8(std::string_view text);

// "byte 0xe9 at offset 7": where `text` stops being UTF-8, for an error message; `text` must
// not be UTF-8 (FirstNonUtf8Byte has a value).
std::string DescribeNonUtf8(std::string_view text);

}  // namespace lockstep
