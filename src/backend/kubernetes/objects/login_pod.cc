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
// Or the user's own sshd: unprivileged, it logs in only its own user, by the Secret's keys. Its
// sessions get lockstep's environment through SetEnv (sshd passes the container's on to none).
constexpr char kSshd[] =
    "if [ ! -x /usr/sbin/sshd ]; then echo 'login.ssh: the image has no /usr/sbin/sshd' >&2; "
    "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done; fi; "
    "mkdir -p /tmp/ssh && cat > /tmp/ssh/sshd_config <<EOF\n"
    "Port $LOCKSTEP_SSH_PORT\n"
    "HostKey /var/run/lockstep/ssh_host_key\n"
    "PidFile /tmp/ssh/sshd.pid\n"
    "AuthorizedKeysFile /var/run/lockstep/authorized_keys\n"
    "PasswordAuthentication no\n"
    "KbdInteractiveAuthentication no\n"
    "UsePAM no\n"
    "StrictModes no\n"
    "PrintMotd no\n"
    "Subsystem sftp internal-sftp\n"
    "SetEnv PATH=$PATH LOCKSTEP_SERVER=$LOCKSTEP_SERVER LOCKSTEP_TOKEN_FILE=$LOCKSTEP_TOKEN_FILE "
    "LOCKSTEP_CA_CERT=$LOCKSTEP_CA_CERT\n"
    "EOF\n"
    "exec /usr/sbin/sshd -D -e -f /tmp/ssh/sshd_config";

Json Labels(const std::string& user) {
  return {{"app.kubernetes.io/managed-by", "lockstep"},
          {"app.kubernetes.io/component", "login"},
          {kLoginUserLabel, user}};
}

// The declared file systems as hostPath volumes (HostToContainer: mounts made later show).
void AddStorage(const std::vector<HostMount>& storage, Json& volumes, Json& mounts) {
  for (std::size_t i = 0; i < storage.size(); ++i) {
    const HostMount& m = storage[i];
    const std::string volume = "storage-" + std::to_string(i);
    volumes.push_back({{"name", volume}, {"hostPath", {{"path", m.path}, {"type", "Directory"}}}});
    Json mount = {{"name", volume},
                  {"mountPath", m.target.empty() ? m.path : m.target},
                  {"mountPropagation", "HostToContainer"}};
    if (m.read_only) mount["readOnly"] = true;
    mounts.push_back(std::move(mount));
  }
}

Json Resources(std::int64_t cpu_millis, std::int64_t memory_mb) {
  const std::string cpu = std::to_string(cpu_millis) + "m";
  const std::string memory = std::to_string(memory_mb) + "Mi";
  return {{"requests", {{"cpu", cpu}, {"memory", memory}}}, {"limits", {{"cpu", cpu}, {"memory", memory}}}};
}

// No escalation, a read-only root, every capability dropped but `add`.
Json ContainerSecurity(const std::vector<std::string>& add) {
  Json caps = {{"drop", {"ALL"}}};
  if (!add.empty()) caps["add"] = add;
  return {{"allowPrivilegeEscalation", false},
          {"privileged", false},
          {"readOnlyRootFilesystem", true},
          {"capabilities", caps}};
}

// A pool pod's main process: the users' token directory closed to them (the emptyDir comes
// 0777), then nothing but waiting.
constexpr char kPoolMainLoop[] =
    "chmod 0711 /run/lockstep-users || exit 1; "
    "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done";

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
  if (spec.ssh_port > 0) env.push_back({{"name", "LOCKSTEP_SSH_PORT"}, {"value", std::to_string(spec.ssh_port)}});

  Json mounts = Json::array({
      {{"name", kSecretVolume}, {"mountPath", secret_dir}, {"readOnly", true}},
      {{"name", kSecretVolume}, {"mountPath", "/etc/passwd"}, {"subPath", "passwd"}, {"readOnly", true}},
      {{"name", kSecretVolume}, {"mountPath", "/etc/group"}, {"subPath", "group"}, {"readOnly", true}},
      {{"name", "tmp"}, {"mountPath", "/tmp"}},
  });
  Json items = Json::array({{{"key", "token"}, {"path", "token"}, {"mode", 0440}},
                            {{"key", "passwd"}, {"path", "passwd"}, {"mode", 0444}},
                            {{"key", "group"}, {"path", "group"}, {"mode", 0444}},
                            {{"key", "authorized_keys"}, {"path", "authorized_keys"}, {"mode", 0444}}});
  if (spec.has_ca) items.push_back({{"key", "ca.crt"}, {"path", "ca.crt"}, {"mode", 0444}});
  // Owned by root, readable by the user's group: sshd takes a key of another owner as private.
  if (spec.ssh_port > 0)
    items.push_back({{"key", "ssh_host_key"}, {"path", "ssh_host_key"}, {"mode", 0440}});
  Json volumes = Json::array({
      {{"name", kSecretVolume}, {"secret", {{"secretName", name}, {"items", items}, {"defaultMode", 0440}}}},
      {{"name", "tmp"}, {"emptyDir", Json::object()}},
  });
  AddStorage(spec.mounts, volumes, mounts);
  Json container = {
      {"name", "login"},
      {"image", spec.image},
      {"imagePullPolicy", "IfNotPresent"},
      {"command", {"/bin/sh", "-c", spec.ssh_port > 0 ? kSshd : kMainLoop}},
      {"workingDir", home},
      {"env", env},
      {"volumeMounts", mounts},
      {"resources", Resources(spec.cpu_millis, spec.memory_mb)},
      {"securityContext", ContainerSecurity({})},
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
  if (spec.ssh_port > 0)
    pod_spec["containers"][0]["ports"] = Json::array(
        {{{"name", "ssh"}, {"containerPort", spec.ssh_port}, {"protocol", "TCP"}}});
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

std::string LoginPoolPodName(const std::string& pool) { return std::string(kPrefix) + "pool-" + pool; }

Result<Json> BuildLoginPoolPod(const LoginPoolPodSpec& spec) {
  if (spec.image.empty()) return InvalidArgument("login: no image");
  if (!IsDns1123Label(LoginPoolPodName(spec.pool)))
    return InvalidArgument("login: '" + spec.pool + "' is not a pool name");
  const std::string name = LoginPoolPodName(spec.pool);
  Json env = Json::array({{{"name", "PATH"}, {"value", "/usr/local/bin:/usr/bin:/bin"}}});
  if (!spec.server.empty()) env.push_back({{"name", "LOCKSTEP_SERVER"}, {"value", spec.server}});
  if (spec.has_ca)
    env.push_back({{"name", "LOCKSTEP_CA_CERT"}, {"value", std::string(kLoginSecretDir) + "/ca.crt"}});
  Json mounts = Json::array({
      {{"name", "login"}, {"mountPath", kLoginSecretDir}, {"readOnly", true}},
      {{"name", "login"}, {"mountPath", "/etc/passwd"}, {"subPath", "passwd"}, {"readOnly", true}},
      {{"name", "login"}, {"mountPath", "/etc/group"}, {"subPath", "group"}, {"readOnly", true}},
      {{"name", "tmp"}, {"mountPath", "/tmp"}},
      {{"name", "users"}, {"mountPath", kLoginPoolTokenDir}},
  });
  Json items = Json::array({{{"key", "passwd"}, {"path", "passwd"}, {"mode", 0444}},
                            {{"key", "group"}, {"path", "group"}, {"mode", 0444}}});
  if (spec.has_ca) items.push_back({{"key", "ca.crt"}, {"path", "ca.crt"}, {"mode", 0444}});
  Json volumes = Json::array({
      {{"name", "login"}, {"secret", {{"secretName", name}, {"items", items}, {"defaultMode", 0444}}}},
      {{"name", "tmp"}, {"emptyDir", Json::object()}},
      {{"name", "users"}, {"emptyDir", {{"medium", "Memory"}}}},
  });
  AddStorage(spec.mounts, volumes, mounts);
  Json container = {
      {"name", "login"},
      {"image", spec.image},
      {"imagePullPolicy", "IfNotPresent"},
      {"command", {"/bin/sh", "-c", kPoolMainLoop}},
      {"env", env},
      {"volumeMounts", mounts},
      {"resources", Resources(spec.cpu_millis, spec.memory_mb)},
      // Root with only what running each session as its user takes (login_as.h).
      {"securityContext", ContainerSecurity({"SETUID", "SETGID", "CHOWN"})},
  };
  Json pod_spec = {
      {"restartPolicy", "Always"},
      {"terminationGracePeriodSeconds", 5},
      {"enableServiceLinks", false},
      {"automountServiceAccountToken", false},
      {"hostname", name},
      {"securityContext", {{"runAsUser", 0}, {"runAsGroup", 0}}},
      {"containers", Json::array({container})},
      {"volumes", volumes},
  };
  if (!spec.node.empty()) pod_spec["nodeName"] = spec.node;
  if (spec.host_network) {
    pod_spec["hostNetwork"] = true;
    pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet";
    pod_spec.erase("hostname");
  }
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"namespace", spec.ns},
                {"labels",
                 {{"app.kubernetes.io/managed-by", "lockstep"},
                  {"app.kubernetes.io/component", "login"},
                  {kLoginPoolLabel, spec.pool}}}}},
              {"spec", pod_spec}};
}

nlohmann::json BuildLoginSecret(const std::string& ns, const std::string& user,
                                const LoginSecretData& d) {
  Json data = {{"token", d.token}, {"passwd", d.passwd}, {"group", d.group},
               {"authorized_keys", d.authorized_keys}};
  if (!d.ca_pem.empty()) data["ca.crt"] = d.ca_pem;
  if (!d.ssh_host_key.empty()) data["ssh_host_key"] = d.ssh_host_key;
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"type", "Opaque"},
          {"metadata",
           {{"name", LoginPodName(user)},
            {"namespace", ns},
            {"labels", Labels(user)},
            {"annotations", {{kLoginTokenExpiresAnnotation, std::to_string(d.token_expires)}}}}},
          {"stringData", data}};
}

nlohmann::json BuildLoginService(const std::string& ns, const std::string& user) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", {{"name", LoginPodName(user)}, {"namespace", ns}, {"labels", Labels(user)}}},
          {"spec",
           {{"type", "NodePort"},
            {"selector", {{"app.kubernetes.io/component", "login"}, {kLoginUserLabel, user}}},
            {"ports", Json::array({{{"name", "ssh"}, {"port", 22}, {"targetPort", "ssh"}, {"protocol", "TCP"}}})}}}};
}

}  // namespace lockstep::kube
