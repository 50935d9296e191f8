#include "backend/kubernetes/client/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace lockstep::kube {
namespace {

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Trim(std::string s) {
  const char* ws = " \t\r\n";
  s.erase(0, s.find_first_not_of(ws));
  s.erase(s.find_last_not_of(ws) + 1);
  return s;
}

std::string DirOf(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Reads a kubeconfig's named list ("clusters", "users", "contexts") into name -> inner map.
class ConfigReader {
 public:
  ConfigReader(const YAML::Node& root, std::string path) : root_(root), path_(std::move(path)) {}

  Result<YAML::Node> Entry(const std::string& list, const std::string& inner,
                           const std::string& name, const std::string& referrer) const {
    const YAML::Node items = root_[list];
    if (items && !items.IsSequence()) return Invalid(list, "must be a list");
    if (items) {
      for (const auto& item : items) {
        if (!item.IsMap() || !item["name"] || item["name"].as<std::string>() != name) continue;
        const YAML::Node body = item[inner];
        if (!body) return Invalid(list + "[" + name + "]." + inner, "missing");
        if (!body.IsMap()) return Invalid(list + "[" + name + "]." + inner, "must be a mapping");
        return body;
      }
    }
    return Invalid(referrer, "names " + inner + " '" + name + "', which is not in " + list);
  }

  Status Invalid(const std::string& field, const std::string& what) const {
    return InvalidArgument(path_ + ": " + field + ": " + what);
  }

  // `field` of `node` as a string, or "" when absent.
  static std::string Str(const YAML::Node& node, const char* field) {
    const YAML::Node v = node[field];
    return v && v.IsScalar() ? v.as<std::string>() : std::string();
  }

  // A PEM either inline (`data_field`, base64) or in a file (`file_field`).
  Result<std::string> Pem(const YAML::Node& node, const std::string& where, const char* file_field,
                          const char* data_field) const {
    if (const std::string data = Str(node, data_field); !data.empty()) {
      Result<std::string> decoded = DecodeBase64(data);
      if (!decoded.ok()) return Invalid(where + "." + data_field, decoded.status().message());
      return decoded;
    }
    if (const std::string file = Str(node, file_field); !file.empty()) {
      Result<std::string> text = ReadWholeFile(Resolve(file));
      if (!text.ok()) return Invalid(where + "." + file_field, text.status().message());
      return text;
    }
    return std::string();
  }

  std::string Resolve(const std::string& file) const {
    return file.empty() || file[0] == '/' ? file : DirOf(path_) + "/" + file;
  }

 private:
  YAML::Node root_;
  std::string path_;
};

Result<KubeConfig> ParseKubeConfigOrThrow(const std::string& yaml_text, const std::string& path,
                                          const std::string& wanted_context) {
  const YAML::Node root = YAML::Load(yaml_text);
  ConfigReader reader(root, path);
  if (!root.IsMap()) return reader.Invalid("(document)", "must be a mapping");
  KubeConfig cfg;
  cfg.source = path;
  cfg.context =
      wanted_context.empty() ? ConfigReader::Str(root, "current-context") : wanted_context;
  if (cfg.context.empty()) {
    return reader.Invalid("current-context", "not set, and no context was named");
  }
  const std::string ctx_field = wanted_context.empty() ? "current-context" : "context";
  Result<YAML::Node> ctx = reader.Entry("contexts", "context", cfg.context, ctx_field);
  if (!ctx.ok()) return ctx.status();
  const std::string ctx_where = "contexts[" + cfg.context + "].context";
  const std::string cluster_name = ConfigReader::Str(*ctx, "cluster");
  if (cluster_name.empty()) return reader.Invalid(ctx_where + ".cluster", "missing");
  if (std::string ns = ConfigReader::Str(*ctx, "namespace"); !ns.empty()) cfg.namespace_ = ns;

  Result<YAML::Node> cluster =
      reader.Entry("clusters", "cluster", cluster_name, ctx_where + ".cluster");
  if (!cluster.ok()) return cluster.status();
  const std::string cl_where = "clusters[" + cluster_name + "].cluster";
  cfg.server = ConfigReader::Str(*cluster, "server");
  if (cfg.server.empty()) return reader.Invalid(cl_where + ".server", "missing");
  if (cfg.server.rfind("https://", 0) != 0) {
    return reader.Invalid(cl_where + ".server",
                          "'" + cfg.server + "' is not an https:// URL (only TLS is supported)");
  }
  cfg.insecure_skip_tls_verify = ConfigReader::Str(*cluster, "insecure-skip-tls-verify") == "true";
  cfg.tls_server_name = ConfigReader::Str(*cluster, "tls-server-name");
  Result<std::string> ca =
      reader.Pem(*cluster, cl_where, "certificate-authority", "certificate-authority-data");
  if (!ca.ok()) return ca.status();
  cfg.ca_pem = std::move(*ca);

  const std::string user_name = ConfigReader::Str(*ctx, "user");
  if (user_name.empty()) return cfg;  // anonymous
  Result<YAML::Node> user = reader.Entry("users", "user", user_name, ctx_where + ".user");
  if (!user.ok()) return user.status();
  const std::string u_where = "users[" + user_name + "].user";
  cfg.token = ConfigReader::Str(*user, "token");
  if (const std::string tf = ConfigReader::Str(*user, "tokenFile");
      cfg.token.empty() && !tf.empty()) {
    cfg.token_file = reader.Resolve(tf);
    Result<std::string> tok = ReadWholeFile(cfg.token_file);
    if (!tok.ok()) return reader.Invalid(u_where + ".tokenFile", tok.status().message());
    cfg.token = Trim(*tok);
  }
  Result<std::string> cert =
      reader.Pem(*user, u_where, "client-certificate", "client-certificate-data");
  if (!cert.ok()) return cert.status();
  Result<std::string> key = reader.Pem(*user, u_where, "client-key", "client-key-data");
  if (!key.ok()) return key.status();
  if (cert->empty() != key->empty()) {
    return reader.Invalid(u_where, cert->empty() ? "client-key without client-certificate"
                                                 : "client-certificate without client-key");
  }
  cfg.client_cert_pem = std::move(*cert);
  cfg.client_key_pem = std::move(*key);
  if (ConfigReader::Str(*user, "username").size() || (*user)["exec"] || (*user)["auth-provider"]) {
    if (cfg.token.empty() && cfg.client_cert_pem.empty()) {
      return reader.Invalid(u_where, "only token, tokenFile and client certificates are supported");
    }
  }
  return cfg;
}

}  // namespace

Result<std::string> DecodeBase64(const std::string& text) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  bool padding = false;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z') {
      v = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      v = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      v = c - '0' + 52;
    } else if (c == '+') {
      v = 62;
    } else if (c == '/') {
      v = 63;
    } else if (c == '=') {
      padding = true;
      continue;
    } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      continue;
    } else {
      return InvalidArgument(std::string("not base64: unexpected character '") + c + "'");
    }
    if (padding) return InvalidArgument("not base64: data after '=' padding");
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  return out;
}

Result<KubeConfig> ParseKubeConfig(const std::string& yaml_text, const std::string& path,
                                   const std::string& context) {
  try {  // yaml-cpp throws; nothing of it leaves this call
    return ParseKubeConfigOrThrow(yaml_text, path, context);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ": line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

Result<KubeConfig> LoadKubeConfigFile(const std::string& path, const std::string& context) {
  Result<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  return ParseKubeConfig(*text, path, context);
}

InClusterOptions InClusterOptionsFromEnvironment() {
  InClusterOptions o;
  for (const char* name : {"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"}) {
    if (const char* v = std::getenv(name)) o.env[name] = v;
  }
  return o;
}

Result<KubeConfig> LoadInClusterConfig(const InClusterOptions& options) {
  auto env = [&](const char* name) {
    auto it = options.env.find(name);
    return it == options.env.end() ? std::string() : it->second;
  };
  std::string host = env("KUBERNETES_SERVICE_HOST");
  const std::string port = env("KUBERNETES_SERVICE_PORT");
  if (host.empty() || port.empty()) {
    return FailedPrecondition(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be "
        "set");
  }
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  KubeConfig cfg;
  cfg.context = "in-cluster";
  cfg.source = options.service_account_dir;
  cfg.server = "https://" + host + ":" + port;
  cfg.token_file = options.service_account_dir + "/token";
  Result<std::string> token = ReadWholeFile(cfg.token_file);
  if (!token.ok()) return IoError("in-cluster token: " + token.status().message());
  cfg.token = Trim(*token);
  if (cfg.token.empty())
    return InvalidArgument("in-cluster token: " + cfg.token_file + " is empty");
  Result<std::string> ca = ReadWholeFile(options.service_account_dir + "/ca.crt");
  if (!ca.ok()) return IoError("in-cluster CA: " + ca.status().message());
  cfg.ca_pem = std::move(*ca);
  // The namespace file is optional: fall back to "default", as client-go does.
  if (Result<std::string> ns = ReadWholeFile(options.service_account_dir + "/namespace"); ns.ok()) {
    if (std::string n = Trim(*ns); !n.empty()) cfg.namespace_ = n;
  }
  return cfg;
}

Result<KubeConfig> LoadDefaultConfig() {
  if (const char* kc = std::getenv("KUBECONFIG"); kc && *kc) {
    std::string first = kc;
    first = first.substr(0, first.find(':'));
    return LoadKubeConfigFile(first);
  }
  if (const char* h = std::getenv("KUBERNETES_SERVICE_HOST"); h && *h) {
    return LoadInClusterConfig(InClusterOptionsFromEnvironment());
  }
  const char* home = std::getenv("HOME");
  return LoadKubeConfigFile(std::string(home && *home ? home : "/root") + "/.kube/config");
}

}  // namespace lockstep::kube
