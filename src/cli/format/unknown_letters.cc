#include "cli/format/unknown_letters.h"

namespace lockstep::cli {
namespace {

std::string TokenText(const FieldSpec& f) {
  std::string t = "%";
  if (f.right) t += '.';
  if (f.auto_width)
    t += '#';
  else if (f.width > 0)
    t += std::to_string(f.width);
  return t + f.letter + f.suffix;
}

}  // namespace

std::vector<char> SettleUnknownLetters(FormatSpec& spec, const std::function<bool(char)>& known,
                                       UnknownLetter how, bool allow_auto_width) {
  std::vector<char> unknown;
  std::vector<FieldSpec> kept;
  for (FieldSpec& f : spec.fields) {
    if (known(f.letter) && (allow_auto_width || !f.auto_width)) {
      kept.push_back(std::move(f));
      continue;
    }
    unknown.push_back(f.letter);
    if (how == UnknownLetter::kDrop) continue;
    (kept.empty() ? spec.prefix : kept.back().suffix) += TokenText(f);
  }
  spec.fields = std::move(kept);
  return unknown;
}

std::vector<char> UnknownLetters(const std::string& format,
                                 const std::function<bool(char)>& known) {
  Result<FormatSpec> spec = ParseFormat(format, "");
  if (!spec.ok()) return {};
  return SettleUnknownLetters(*spec, known, UnknownLetter::kDrop);
}

}  // namespace lockstep::cli
