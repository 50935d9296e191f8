// A format letter the command does not know, handled as Slurm 22.05's commands handle it: they
// say so on stderr ("Invalid node format specification: Q") and go on. sinfo and squeue print
// the token as text ("%.5Q"), sprio leaves it out with the text after it. Pure functions.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/format/field_format.h"

namespace lockstep::cli {

enum class UnknownLetter { kAsText, kDrop };

// Takes the fields whose letter `known` refuses (and '#' widths where `allow_auto_width` is
// false) out of `spec`, as text or dropped; returns their letters, in order.
std::vector<char> SettleUnknownLetters(FormatSpec& spec, const std::function<bool(char)>& known,
                                       UnknownLetter how, bool allow_auto_width = true);

// The letters of `format` that `known` refuses (none when the format does not parse: the
// formatter reports that), for the command's warnings.
std::vector<char> UnknownLetters(const std::string& format, const std::function<bool(char)>& known);

}  // namespace lockstep::cli
