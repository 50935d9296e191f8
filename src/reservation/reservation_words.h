// scontrol's reservation words ("StartTime=now+1hour", "Users+=bob", "Flags-=MAINT") read into
// a change: keys by Slurm's abbreviation rules, values parsed, errors in Slurm's words.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/types.h"

namespace lockstep::reservation {

// How a list value changes the one in place: Users=a (set), Users+=a (add), Users-=a (remove).
enum class ListOp : std::uint8_t { kSet, kAdd, kRemove };

struct ListChange {
  ListOp op = ListOp::kSet;
  std::vector<std::string> names;
};

// One create or update request, each field as given (absent: not given).
struct ReservationWords {
  std::optional<std::string> name;
  std::optional<Time> start, end;
  std::optional<Seconds> duration;  // kUnlimited: infinite
  std::optional<std::string> nodes;  // a hostlist, or "ALL"
  std::optional<std::uint32_t> node_count;
  std::optional<std::string> partition;
  std::optional<ListChange> users, accounts;
  std::optional<ListOp> flags_op;
  std::uint32_t flags = 0;  // the named flags (reservation::Flag)
  std::optional<Seconds> purge_comp;
};

// `verb` is "created" or "update" for the refusals' tail ("No reservation created.").
Result<ReservationWords> ReadReservationWords(const std::vector<std::string>& words, Time now,
                                              const std::string& verb);

}  // namespace lockstep::reservation
