#include "backend/kubernetes/objects/login_pod.h"

#include <fmt/format.h>


namespace lockstep::kube {
namespace {

using Json = nlohmann::json;

constexpr char kPrefix[] = "lockstep-login-";
constexpr char kSecretVolume[] = "login";
// The main process: nothing but waiting, gone at SIGTERM (a shell as PID 1 ignores it unless
// it traps it). Sessions are execs beside it.
constexpr char kMainLoop[] = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done";

Json Labels(const std::string& user) {
  return {{"app.kubernetes.io/managed-by", "lockstep"},
          {"app.kubernetes.io/component", "login"},
          {kLoginUserLabel, user}};
}

}  // namespace

std::string LoginPodName(const std::string& user) {
  const std::string plain = kPrefix + user;
  if (IsDns1123Label(plain)) return plain;
  std::string name;
  for (char c : user) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    name += ok ? c : (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : '-';
  }
  // FNV-1a: the same name from every build, so a restarted lockstepd finds the pod.
  std::uint32_t h = 2166136261u;
  for (unsigned char c : user) h = (h ^ c) * 16777619u;
  const std::string hash = fmt::format("{:08x}", h);
  name = std::string(kPrefix) + name.substr(0, 63 - sizeof(kPrefix) + 1 - 9);
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name + "-" + hash;
}

Result<Json> BuildLoginPod(const LoginPodSpec& spec) {
  if (spec.uid == 0 || spec.gid == 0)
    return InvalidArgument("login: " + spec.user + " is root (uid or gid 0): login pods run only ordinary users");
  if (spec.image.empty()) return InvalidArgument("login: no image");
  if (!IsLabelValue(spec.user)) return InvalidArgument("login: '" + spec.user + "' is not a plain user name");
  const std::string name = LoginPodName(spec.user);
  const std::string secret_dir = kLoginSecretDir;
  const std::string home = spec.home_mounted ? spec.home : "/tmp";
  Json env = Json::array({
      {{"name", "USER"}, {"value", spec.user}},
      {{"name", "LOGNAME"}, {"value", spec.user}},
      {{"name", "HOME"}, {"value", home}},
      {{"name", "SHELL"}, {"value", spec.shell}},
      {{"name", "PATH"}, {"value", "/usr/local/bin:/usr/bin:/bin"}},
      {{"name", "LOCKSTEP_TOKEN_FILE"}, {"value", secret_dir + "/token"}},
  });
  if (!spec.server.empty()) env.push_back({{"name", "LOCKSTEP_SERVER"}, {"value", spec.server}});
  if (spec.has_ca) env.push_back({{"name", "LOCKSTEP_CA_CERT"}, {"value", secret_dir + "/ca.crt"}});

  Json mounts = Json::array({
      {{"name", kSecretVolume}, {"mountPath", secret_dir}, {"readOnly", true}},
      {{"name", kSecretVolume}, {"mountPath", "/etc/passwd"}, {"subPath", "passwd"}, {"readOnly", true}},
      {{"name", kSecretVolume}, {"mountPath", "/etc/group"}, {"subPath", "group"}, {"readOnly", true}},
      {{"name", "tmp"}, {"mountPath", "/tmp"}},
  });
  Json items = Json::array({{{"key", "token"}, {"path", "token"}, {"mode", 0440}},
                            {{"key", "passwd"}, {"path", "passwd"}, {"mode", 0444}},
                            {{"key", "group"}, {"path", "group"}, {"mode", 0444}}});
  if (spec.has_ca) items.push_back({{"key", "ca.crt"}, {"path", "ca.crt"}, {"mode", 0444}});
  Json volumes = Json::array({
      {{"name", kSecretVolume}, {"secret", {{"secretName", name}, {"items", items}, {"defaultMode", 0440}}}},
      {{"name", "tmp"}, {"emptyDir", Json::object()}},
  });
  for (std::size_t i = 0; i < spec.mounts.size(); ++i) {
    const HostMount& m = spec.mounts[i];
    const std::string volume = "storage-" + std::to_string(i);
    volumes.push_back({{"name", volume}, {"hostPath", {{"path", m.path}, {"type", "Directory"}}}});
    Json mount = {{"name", volume},
                  {"mountPath", m.target.empty() ? m.path : m.target},
                  {"mountPropagation", "HostToContainer"}};
    if (m.read_only) mount["readOnly"] = true;
    mounts.push_back(std::move(mount));
  }
  const std::string cpu = std::to_string(spec.cpu_millis) + "m";
  const std::string memory = std::to_string(spec.memory_mb) + "Mi";
  Json container = {
      {"name", "login"},
      {"image", spec.image},
      {"imagePullPolicy", "IfNotPresent"},
      {"command", {"/bin/sh", "-c", kMainLoop}},
      {"workingDir", home},
      {"env", env},
      {"volumeMounts", mounts},
      {"resources", {{"requests", {{"cpu", cpu}, {"memory", memory}}},
                     {"limits", {{"cpu", cpu}, {"memory", memory}}}}},
      {"securityContext",
       {{"allowPrivilegeEscalation", false},
        {"privileged", false},
        {"readOnlyRootFilesystem", true},
        {"capabilities", {{"drop", {"ALL"}}}}}},
  };
  Json pod_security = {{"runAsUser", spec.uid},
                       {"runAsGroup", spec.gid},
                       {"runAsNonRoot", true},
                       {"fsGroup", spec.gid}};
  if (!spec.groups.empty()) pod_security["supplementalGroups"] = spec.groups;
  Json pod_spec = {
      {"restartPolicy", "Always"},
      {"terminationGracePeriodSeconds", 5},
      {"enableServiceLinks", false},
      {"automountServiceAccountToken", false},
      {"hostname", name.size() <= 63 ? name : name.substr(0, 63)},
      {"securityContext", pod_security},
      {"containers", Json::array({container})},
      {"volumes", volumes},
  };
  if (!spec.node.empty()) pod_spec["nodeName"] = spec.node;
  if (spec.host_network) {
    pod_spec["hostNetwork"] = true;
    pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet";
    pod_spec.erase("hostname");  // a host-network pod has the node's
  }
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"namespace", spec.ns},
                {"labels", Labels(spec.user)},
                {"annotations", {{kLoginUidAnnotation, std::to_string(spec.uid)}}}}},
              {"spec", pod_spec}};
}

nlohmann::json BuildLoginSecret(const std::string& ns, const std::string& user,
                                const std::string& token, Time token_expires,
                                const std::string& passwd_text, const std::string& group_text,
                                const std::string& ca_pem) {
  Json data = {{"token", token}, {"passwd", passwd_text}, {"group", group_text}};
  if (!ca_pem.empty()) data["ca.crt"] = ca_pem;
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"type", "Opaque"},
          {"metadata",
           {{"name", LoginPodName(user)},
            {"namespace", ns},
            {"labels", Labels(user)},
            {"annotations", {{kLoginTokenExpiresAnnotation, std::to_string(token_expires)}}}}},
          {"stringData", data}};
}

}  // namespace lockstep::kube
