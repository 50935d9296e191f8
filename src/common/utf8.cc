#include "common/utf8.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

namespace lockstep {
namespace {

bool IsContinuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

// The length of the well-formed sequence `text` starts with; 0 when it starts with none.
std::size_t SequenceLength(std::string_view text) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char second_min = 0x80;  // the second byte's range, narrower after some leads
  unsigned char second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;  // overlong below U+0800
    if (lead == 0xED) second_max = 0x9F;  // surrogates U+D800..U+DFFF
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;  // overlong below U+10000
    if (lead == 0xF4) second_max = 0x8F;  // above U+10FFFF
  } else {
    return 0;  // a continuation byte, C0, C1 or F5..FF
  }
  if (text.size() < length || byte(1) < second_min || byte(1) > second_max) return 0;
  for (std::size_t i = 2; i < length; ++i)
    if (!IsContinuation(byte(i))) return 0;
  return length;
}

// The end of the ASCII bytes from `at` on, read 8 at a time: most text is ASCII.
std::size_t SkipAscii(std::string_view text, std::size_t at) {
  constexpr std::uint64_t kHighBits = 0x8080808080808080u;
  for (std::uint64_t word = 0; at + sizeof word <= text.size(); at += sizeof word) {
    std::memcpy(&word, text.data() + at, sizeof word);
    if (word & kHighBits) break;
  }
  while (at < text.size() && static_cast<unsigned char>(text[at]) < 0x80) ++at;
  return at;
}

}  // namespace

std::optional<std::size_t> FirstNonUtf8Byte(std::string_view text) {
  for (std::size_t at = SkipAscii(text, 0); at < text.size(); at = SkipAscii(text, at)) {
    const std::size_t n = SequenceLength(text.substr(at));
    if (n == 0) return at;
    at += n;
  }
  return std::nullopt;
}

std::string CoercedToUtf8(std::string_view text) {
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t n = SequenceLength(text.substr(at));
    if (n == 0) {
      out += kReplacement;
      ++at;
    } else {
      out.append(text.substr(at, n));
      at += n;
    }
  }
  return out;
}

std::string DescribeNonUtf8(std::string_view text) {
  const std::size_t at = FirstNonUtf8Byte(text).value_or(text.size());
  if (at == text.size()) return "no byte that is not UTF-8";
  return fmt::format("byte {:#04x} at offset {}", static_cast<unsigned char>(text[at]), at);
}

}  // namespace lockstep
