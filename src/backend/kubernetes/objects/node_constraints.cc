#include "backend/kubernetes/objects/node_constraints.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <tuple>

#include "backend/kubernetes/objects/json_util.h"

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;
using internal::Child;
using internal::Path;

constexpr const char* kRequiredPath =
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";

// Errors say "pod ns/name: <field>: <what>".
struct Where {
  std::string pod;
  Status Error(const std::string& field, const std::string& what) const {
    return InvalidArgument(pod + ": " + field + ": " + what);
  }
};

std::string Quote(const Json& v) {
  return v.is_string() ? "\"" + v.get<std::string>() + "\"" : v.dump();
}

bool ParseInteger(const std::string& text, std::int64_t* out) {
  const char* b = text.data();
  const char* e = b + text.size();
  if (b != e && *b == '+') ++b;  // Go's strconv.ParseInt takes a sign
  auto [end, ec] = std::from_chars(b, e, *out);
  return b != e && ec == std::errc() && end == e;
}

Result<std::vector<std::string>> Strings(const Json* values, const std::string& field,
                                         const Where& w) {
  std::vector<std::string> out;
  if (!values || values->is_null()) return out;
  if (!values->is_array()) return w.Error(field, "not a list");
  for (std::size_t i = 0; i < values->size(); ++i) {
    if (!(*values)[i].is_string())
      return w.Error(field + "[" + std::to_string(i) + "]",
                     Quote((*values)[i]) + " is not a string");
    out.push_back((*values)[i].get<std::string>());
  }
  return out;
}

Result<NodeSelectorRequirement> ParseRequirement(const Json& r, const std::string& field,
                                                 bool on_fields, const Where& w) {
  if (!r.is_object()) return w.Error(field, "not an object");
  NodeSelectorRequirement q;
  const Json* key = Child(r, "key");
  if (!key || !key->is_string() || key->get<std::string>().empty())
    return w.Error(field + ".key", "missing");
  q.key = key->get<std::string>();
  if (on_fields && q.key != "metadata.name")
    return w.Error(field + ".key", Quote(*key) + " is not metadata.name, the only field supported");
  const Json* op = Child(r, "operator");
  const std::string name = op && op->is_string() ? op->get<std::string>() : "";
  static const std::map<std::string, SelectorOp> kOps = {
      {"In", SelectorOp::kIn},         {"NotIn", SelectorOp::kNotIn},
      {"Exists", SelectorOp::kExists}, {"DoesNotExist", SelectorOp::kDoesNotExist},
      {"Gt", SelectorOp::kGt},         {"Lt", SelectorOp::kLt}};
  auto it = kOps.find(name);
  if (on_fields &&
      (it == kOps.end() || (it->second != SelectorOp::kIn && it->second != SelectorOp::kNotIn)))
    return w.Error(field + ".operator", (op ? Quote(*op) : "none") + " is not In or NotIn");
  if (it == kOps.end())
    return w.Error(field + ".operator", (op ? Quote(*op) : "none") +
                                            " is not In, NotIn, Exists, DoesNotExist, Gt or Lt");
  q.op = it->second;
  Result<std::vector<std::string>> values = Strings(Child(r, "values"), field + ".values", w);
  if (!values.ok()) return values.status();
  q.values = std::move(*values);
  const std::size_t n = q.values.size();
  switch (q.op) {
    case SelectorOp::kIn:
    case SelectorOp::kNotIn:
      if (n == 0) return w.Error(field + ".values", name + " needs at least one value");
      if (on_fields && n != 1) return w.Error(field + ".values", name + " takes exactly one value");
      break;
    case SelectorOp::kExists:
    case SelectorOp::kDoesNotExist:
      if (n != 0) return w.Error(field + ".values", name + " takes no values");
      break;
    case SelectorOp::kGt:
    case SelectorOp::kLt:
      if (n != 1) return w.Error(field + ".values", name + " takes exactly one value");
      if (!ParseInteger(q.values[0], &q.number))
        return w.Error(field + ".values[0]", "\"" + q.values[0] + "\" is not an integer");
      break;
  }
  std::sort(q.values.begin(), q.values.end());
  q.values.erase(std::unique(q.values.begin(), q.values.end()), q.values.end());
  return q;
}

auto RequirementOrder(const NodeSelectorRequirement& q) {
  return std::tie(q.key, q.op, q.values);
}

Result<std::vector<NodeSelectorRequirement>> ParseRequirements(const Json& term, const char* name,
                                                               const std::string& field,
                                                               const Where& w) {
  std::vector<NodeSelectorRequirement> out;
  const Json* list = Child(term, name);
  if (!list || list->is_null()) return out;
  if (!list->is_array()) return w.Error(field + "." + name, "not a list");
  const bool on_fields = std::string(name) == "matchFields";
  for (std::size_t i = 0; i < list->size(); ++i) {
    Result<NodeSelectorRequirement> q = ParseRequirement(
        (*list)[i], field + "." + name + "[" + std::to_string(i) + "]", on_fields, w);
    if (!q.ok()) return q.status();
    out.push_back(std::move(*q));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return RequirementOrder(a) < RequirementOrder(b); });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Json RequirementJson(const NodeSelectorRequirement& q) {
  return Json::array({q.key, static_cast<int>(q.op), q.values});
}

Json TermJson(const NodeSelectorTerm& t) {
  Json e = Json::array(), f = Json::array();
  for (const auto& q : t.match_expressions) e.push_back(RequirementJson(q));
  for (const auto& q : t.match_fields) f.push_back(RequirementJson(q));
  return Json::array({e, f});
}

Result<std::vector<NodeSelectorTerm>> ParseRequired(const Json& pod, const Where& w) {
  std::vector<NodeSelectorTerm> out;
  const Json* req = Path(pod, "spec", "affinity", "nodeAffinity",
                         "requiredDuringSchedulingIgnoredDuringExecution");
  if (!req || req->is_null()) return out;
  const std::string field = std::string(kRequiredPath) + ".nodeSelectorTerms";
  const Json* terms = Child(*req, "nodeSelectorTerms");
  if (!terms || !terms->is_array() || terms->empty())
    return w.Error(field, "at least one term is required");
  std::vector<std::pair<std::string, NodeSelectorTerm>> keyed;
  for (std::size_t i = 0; i < terms->size(); ++i) {
    const std::string tf = field + "[" + std::to_string(i) + "]";
    if (!(*terms)[i].is_object()) return w.Error(tf, "not an object");
    NodeSelectorTerm t;
    Result<std::vector<NodeSelectorRequirement>> e =
        ParseRequirements((*terms)[i], "matchExpressions", tf, w);
    if (!e.ok()) return e.status();
    Result<std::vector<NodeSelectorRequirement>> f =
        ParseRequirements((*terms)[i], "matchFields", tf, w);
    if (!f.ok()) return f.status();
    t.match_expressions = std::move(*e);
    t.match_fields = std::move(*f);
    keyed.emplace_back(TermJson(t).dump(), std::move(t));
  }
  std::sort(keyed.begin(), keyed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < keyed.size(); ++i)
    if (i == 0 || keyed[i].first != keyed[i - 1].first) out.push_back(std::move(keyed[i].second));
  return out;
}

Result<std::map<std::string, std::string>> ParseNodeSelector(const Json& pod, const Where& w) {
  std::map<std::string, std::string> out;
  const Json* sel = Path(pod, "spec", "nodeSelector");
  if (!sel || sel->is_null()) return out;
  if (!sel->is_object()) return w.Error("spec.nodeSelector", "not an object");
  for (auto it = sel->begin(); it != sel->end(); ++it) {
    if (!it->is_string())
      return w.Error("spec.nodeSelector." + it.key(), Quote(*it) + " is not a string");
    out[it.key()] = it->get<std::string>();
  }
  return out;
}

Result<Toleration> ParseToleration(const Json& t, const std::string& field, const Where& w) {
  if (!t.is_object()) return w.Error(field, "not an object");
  Toleration out;
  out.key = internal::StringAt(t, "key");
  out.value = internal::StringAt(t, "value");
  out.effect = internal::StringAt(t, "effect");
  const std::string op = internal::StringAt(t, "operator");
  if (op == "Exists") {
    out.exists = true;
  } else if (!op.empty() && op != "Equal") {
    return w.Error(field + ".operator", "\"" + op + "\" is not Exists or Equal");
  }
  if (out.key.empty() && !out.exists)
    return w.Error(field + ".operator", "a toleration without a key needs Exists");
  if (out.exists && !out.value.empty())
    return w.Error(field + ".value", "must be empty with operator Exists");
  if (!out.effect.empty() && out.effect != "NoSchedule" && out.effect != "PreferNoSchedule" &&
      out.effect != "NoExecute")
    return w.Error(field + ".effect",
                   "\"" + out.effect + "\" is not NoSchedule, PreferNoSchedule or NoExecute");
  return out;
}

Result<std::vector<Toleration>> ParseTolerations(const Json& pod, const Where& w) {
  std::vector<Toleration> out;
  const Json* list = Path(pod, "spec", "tolerations");
  if (!list || list->is_null()) return out;
  if (!list->is_array()) return w.Error("spec.tolerations", "not a list");
  for (std::size_t i = 0; i < list->size(); ++i) {
    Result<Toleration> t =
        ParseToleration((*list)[i], "spec.tolerations[" + std::to_string(i) + "]", w);
    if (!t.ok()) return t.status();
    if (t->effect == "PreferNoSchedule") continue;  // never keeps a pod off a node
    out.push_back(std::move(*t));
  }
  auto order = [](const Toleration& t) { return std::tie(t.key, t.exists, t.value, t.effect); };
  std::sort(out.begin(), out.end(),
            [&](const Toleration& a, const Toleration& b) { return order(a) < order(b); });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Json PlacementJson(const PodPlacement& p) {
  Json terms = Json::array(), tolerations = Json::array();
  for (const NodeSelectorTerm& t : p.required_terms) terms.push_back(TermJson(t));
  for (const Toleration& t : p.tolerations)
    tolerations.push_back(Json::array({t.key, t.exists, t.value, t.effect}));
  return Json::array({Json(p.node_selector), terms, tolerations});
}

bool RequirementMatches(const NodeSelectorRequirement& q, const std::string* value) {
  auto listed = [&] { return std::binary_search(q.values.begin(), q.values.end(), *value); };
  std::int64_t n = 0;
  switch (q.op) {
    case SelectorOp::kIn:
      return value && listed();
    case SelectorOp::kNotIn:
      return !value || !listed();
    case SelectorOp::kExists:
      return value != nullptr;
    case SelectorOp::kDoesNotExist:
      return value == nullptr;
    case SelectorOp::kGt:
      return value && ParseInteger(*value, &n) && n > q.number;
    case SelectorOp::kLt:
      return value && ParseInteger(*value, &n) && n < q.number;
  }
  return false;
}

// The tolerations the DefaultTolerationSeconds admission adds to every pod: nodes with those
// taints are DOWN to lockstep anyway, so they do not make a feature name unreadable.
bool IsDefaultToleration(const Toleration& t) {
  return t.exists && t.effect == "NoExecute" &&
         (t.key == "node.kubernetes.io/not-ready" || t.key == "node.kubernetes.io/unreachable");
}

std::uint64_t Fnv1a(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string Hex(std::uint64_t v, int digits) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return std::string(buf + 16 - digits);
}

}  // namespace

NodeView NodeViewOf(const Json& node) {
  NodeView v;
  v.name = internal::StringAt(node, "metadata", "name");
  if (const Json* labels = Path(node, "metadata", "labels"); labels && labels->is_object())
    for (auto it = labels->begin(); it != labels->end(); ++it)
      if (it->is_string()) v.labels[it.key()] = it->get<std::string>();
  if (const Json* taints = Path(node, "spec", "taints"); taints && taints->is_array())
    for (const Json& t : *taints) {
      Taint taint{internal::StringAt(t, "key"), internal::StringAt(t, "value"),
                  internal::StringAt(t, "effect")};
      if (taint.effect == "NoSchedule" || taint.effect == "NoExecute")
        v.taints.push_back(std::move(taint));
    }
  return v;
}

Result<PodPlacement> PodPlacementOf(const Json& pod) {
  const Where w{internal::Describe(pod, "pod")};
  PodPlacement p;
  Result<std::map<std::string, std::string>> sel = ParseNodeSelector(pod, w);
  if (!sel.ok()) return sel.status();
  p.node_selector = std::move(*sel);
  Result<std::vector<NodeSelectorTerm>> terms = ParseRequired(pod, w);
  if (!terms.ok()) return terms.status();
  p.required_terms = std::move(*terms);
  Result<std::vector<Toleration>> tol = ParseTolerations(pod, w);
  if (!tol.ok()) return tol.status();
  p.tolerations = std::move(*tol);
  return p;
}

bool Tolerates(const std::vector<Toleration>& tolerations, const Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(), [&](const Toleration& t) {
    if (!t.effect.empty() && t.effect != taint.effect) return false;
    if (t.key.empty()) return t.exists;  // tolerates every taint
    if (t.key != taint.key) return false;
    return t.exists || t.value == taint.value;
  });
}

bool TermMatches(const NodeSelectorTerm& term, const NodeView& node) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const NodeSelectorRequirement& q : term.match_expressions) {
    auto it = node.labels.find(q.key);
    if (!RequirementMatches(q, it == node.labels.end() ? nullptr : &it->second)) return false;
  }
  for (const NodeSelectorRequirement& q : term.match_fields)
    if (!RequirementMatches(q, &node.name)) return false;
  return true;
}

bool PlacementAllows(const PodPlacement& p, const NodeView& node) {
  for (const auto& [key, value] : p.node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) return false;
  }
  if (!p.required_terms.empty() &&
      std::none_of(p.required_terms.begin(), p.required_terms.end(),
                   [&](const NodeSelectorTerm& t) { return TermMatches(t, node); }))
    return false;
  return std::all_of(node.taints.begin(), node.taints.end(),
                     [&](const Taint& t) { return Tolerates(p.tolerations, t); });
}

GangPlacement::GangPlacement(std::vector<PodPlacement> placements) {
  // The pods of a gang mostly ask alike: equal placements are dropped before serializing.
  std::vector<std::pair<std::string, PodPlacement>> keyed;
  for (PodPlacement& p : placements) {
    if (std::any_of(keyed.begin(), keyed.end(), [&](const auto& k) { return k.second == p; }))
      continue;
    keyed.emplace_back(PlacementJson(p).dump(), std::move(p));
  }
  std::sort(keyed.begin(), keyed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  // The JSON array of the distinct placements' dumps, as Json::dump() would write it.
  canonical_ = "[";
  for (std::size_t i = 0; i < keyed.size(); ++i) {
    if (i > 0 && keyed[i].first == keyed[i - 1].first) continue;  // equal once normalised
    if (canonical_.size() > 1) canonical_ += ',';
    canonical_ += keyed[i].first;
    pods_.push_back(std::move(keyed[i].second));
  }
  canonical_ += ']';
}

Result<GangPlacement> GangPlacement::Of(const std::vector<Json>& pods) {
  std::vector<const Json*> each;
  for (const Json& pod : pods) each.push_back(&pod);
  return OfPods(each);
}

Result<GangPlacement> GangPlacement::OfPods(const std::vector<const Json*>& pods) {
  std::vector<PodPlacement> placements;
  for (const Json* pod : pods) {
    Result<PodPlacement> p = PodPlacementOf(*pod);
    if (!p.ok()) return p.status();
    placements.push_back(std::move(*p));
  }
  return GangPlacement(std::move(placements));
}

bool GangPlacement::Allows(const NodeView& node) const {
  return std::all_of(pods_.begin(), pods_.end(),
                     [&](const PodPlacement& p) { return PlacementAllows(p, node); });
}

bool GangPlacement::Unconstrained() const {
  const Taint any_taint_of_each[] = {{"", "", "NoSchedule"}, {"", "", "NoExecute"}};
  return std::all_of(pods_.begin(), pods_.end(), [&](const PodPlacement& p) {
    if (!p.node_selector.empty() || !p.required_terms.empty()) return false;
    // Only a toleration with an empty key and Exists tolerates taints of any key.
    for (const Taint& t : any_taint_of_each) {
      bool universal = std::any_of(p.tolerations.begin(), p.tolerations.end(), [&](const auto& x) {
        return x.key.empty() && x.exists && (x.effect.empty() || x.effect == t.effect);
      });
      if (!universal) return false;
    }
    return true;
  });
}

std::string GangPlacement::FeatureName() const {
  if (Unconstrained()) return "";
  if (pods_.size() == 1) {
    const PodPlacement& p = pods_.front();
    if (p.required_terms.empty() &&
        std::all_of(p.tolerations.begin(), p.tolerations.end(), IsDefaultToleration)) {
      if (p.node_selector.empty()) return "k8s-untainted";
      if (p.node_selector.size() == 1) {
        std::string name = p.node_selector.begin()->first + "=" + p.node_selector.begin()->second;
        if (name.size() <= 63) return name;
      }
    }
  }
  return "k8s-" + Hex(Fnv1a(canonical_), 8);
}

std::string GangPlacement::LongFeatureName() const {
  return "k8s-" + Hex(Fnv1a(canonical_), 16);
}

}  // namespace lockstep::kube
