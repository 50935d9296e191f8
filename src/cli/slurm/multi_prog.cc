#include "cli/slurm/multi_prog.h"

#include <charconv>
#include <optional>
#include <set>
#include <sstream>

namespace lockstep::cli {
namespace {

constexpr int kMaxRank = 1 << 20;  // bounds what a line may expand to

std::string Quote(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A word with %t and %o replaced: by numbers for one rank, by "$SLURM_PROCID" for '*'.
std::string Expand(const std::string& word, const std::string& rank, const std::string& offset) {
  std::string out, literal;
  auto flush = [&] {
    if (!literal.empty()) out += Quote(literal);
    literal.clear();
  };
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (word[i] == '%' && i + 1 < word.size() && (word[i + 1] == 't' || word[i + 1] == 'o')) {
      flush();
      out += word[i + 1] == 't' ? rank : offset;
      ++i;
    } else {
      literal += word[i];
    }
  }
  flush();
  return out.empty() ? "''" : out;
}

std::optional<int> Number(const std::string& s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0 || v >= kMaxRank) return std::nullopt;
  return v;
}

// "0", "1-3,6": the ranks in order; nullopt when malformed.
std::optional<std::vector<int>> Ranks(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t dash = item.find('-');
    auto lo = Number(item.substr(0, dash));
    auto hi = dash == std::string::npos ? lo : Number(item.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || out.size() + (*hi - *lo) > kMaxRank) return std::nullopt;
    for (int r = *lo; r <= *hi; ++r) out.push_back(r);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

// Whitespace-separated words; '...' and "..." group.
std::optional<std::vector<std::string>> Words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : line) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else if (c == '#' && !in_word) {
      break;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) return std::nullopt;
  if (in_word) words.push_back(word);
  return words;
}

}  // namespace

Result<std::vector<std::string>> MultiProgCommand(const std::string& text,
                                                  const std::string& file) {
  std::stringstream in(text);
  std::string line, branches, fallback;
  std::set<int> seen;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = file + " line " + std::to_string(number) + ": ";
    std::optional<std::vector<std::string>> words = Words(line);
    if (!words) return InvalidArgument(where + "an unterminated quote");
    if (words->empty()) continue;
    if (words->size() < 2) return InvalidArgument(where + "no program for tasks " + (*words)[0]);
    const std::vector<std::string> program(words->begin() + 1, words->end());
    if ((*words)[0] == "*") {
      std::string cmd = "exec";
      for (const std::string& w : program) cmd += " " + Expand(w, "\"$SLURM_PROCID\"", "\"$SLURM_PROCID\"");
      fallback = "  *) " + cmd + " ;;\n";
      continue;
    }
    std::optional<std::vector<int>> ranks = Ranks((*words)[0]);
    if (!ranks) return InvalidArgument(where + "'" + (*words)[0] + "' is not a task range");
    for (std::size_t i = 0; i < ranks->size(); ++i) {
      const int rank = (*ranks)[i];
      if (!seen.insert(rank).second)
        return InvalidArgument(where + "task " + std::to_string(rank) + " has a line already");
      std::string cmd = "exec";
      for (const std::string& w : program)
        cmd += " " + Expand(w, std::to_string(rank), std::to_string(i));
      branches += "  " + std::to_string(rank) + ") " + cmd + " ;;\n";
    }
  }
  if (branches.empty() && fallback.empty())
    return InvalidArgument(file + ": no program in the --multi-prog file");
  if (fallback.empty())
    fallback = "  *) echo \"srun: error: " + std::string("no program for task $SLURM_PROCID in ") +
               "the --multi-prog file\" >&2; exit 1 ;;\n";
  return std::vector<std::string>{"/bin/sh", "-c",
                                  "case \"$SLURM_PROCID\" in\n" + branches + fallback + "esac"};
}

}  // namespace lockstep::cli
