// Slurm hostlists: "gpu[001-064]", "linux[0-64,128]", "rack[0-1]_blade[0-3]", "a1,b[1-2]".
// Pure functions; safe to call from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace lockstep {

// The most hosts one hostlist may expand to; a typo such as "n[0-99999999]" is an error rather
// than a gigabyte of host names.
inline constexpr std::size_t kMaxHostlistHosts = 1'000'000;

// Expands a hostlist into host names, in the order written. Host expressions are separated by
// commas (or whitespace) outside brackets; each expression is text with any number of bracket
// groups, and several groups give their cartesian product with the first group outermost:
// "rack[0-1]_blade[0-1]" -> rack0_blade0, rack0_blade1, rack1_blade0, rack1_blade1.
// Inside brackets are comma-separated numbers and lo-hi ranges; the width of the low number
// fixes the width of every number of its range ("gpu[008-010]" -> gpu008, gpu009, gpu010).
// Duplicates are kept. Errors (InvalidArgument, quoting the hostlist): unbalanced or nested
// brackets, an empty host name or range, a non-number in brackets, a reversed range, and more
// than kMaxHostlistHosts hosts in all.
Result<std::vector<std::string>> ExpandHostlist(std::string_view hostlist);

// Compresses host names into Slurm's ranged form. Names are grouped by the text before their
// trailing digits and by the width of those digits (zero-padded numbers keep their width; a
// number without leading zeros joins a group whose width it does not fall below); groups appear
// in the order of their first host, numbers within a group are sorted, duplicates dropped, and
// consecutive numbers merged into ranges: {"gpu001","gpu002","gpu003","gpu010"} ->
// "gpu[001-003,010]". A group of one host is written plainly ("gpu001"); names without trailing
// digits are written as they are. Expanding the result gives the same set of hosts.
std::string CompressHostlist(const std::vector<std::string>& hosts);

}  // namespace lockstep
