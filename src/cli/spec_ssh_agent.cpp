// --ssh-agent and --ssh-agent-key (SPEC §6c, cordon(1) SSH AGENT): the spec's part. Everything
// here is read on the host, before the jail exists: the caller's known_hosts, its agent's
// socket, the .pub files. The relay itself is src/jail/net/ssh_agent_relay.cpp.
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/fd.hpp"
#include "cordon/net.hpp"
#include "cordon/paths.hpp"
#include "cordon/ssh_agent.hpp"
#include "spec_steps.hpp"

namespace cordon::spec_steps {

namespace {

// "NAME[:PORT]", NAME a host name or an IPv4 address as ssh(1) is given it.
Result<SshAgentHost> parse_agent_host(std::string_view text) {
    SshAgentHost h;
    std::string_view name = text;
    if (const size_t colon = text.rfind(':'); colon != std::string_view::npos) {
        name = text.substr(0, colon);
        const std::string_view port = text.substr(colon + 1);
        unsigned value = 0;
        const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) {
            return make_error("--ssh-agent", "invalid value '" + std::string(text) + "': the port must be 1 to 65535");
        }
        h.port = static_cast<uint16_t>(value);
    }
    auto normal = normalize_host_name(name);
    // No name ssh would take for an option either.
    if (!normal || name.find_first_of("*:[]") != std::string_view::npos || name.front() == '-') {
        return make_error("--ssh-agent", "invalid value '" + std::string(text) + "': expected HOST or HOST:PORT");
    }
    h.name = *normal;
    return h;
}

// Each value of the list, and each of a value's comma-separated hosts.
std::vector<std::string> split_commas(const std::vector<std::string>& values) {
    std::vector<std::string> out;
    for (const auto& v : values) {
        size_t start = 0;
        for (;;) {
            const size_t comma = v.find(',', start);
            out.push_back(v.substr(start, comma - start));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    return out;
}

// The caller's known_hosts files, one after the other: ssh(1)'s defaults (the user's and the
// system's, each with its "2"), the user's in HOME and, where it differs, in the password
// database's home, which ssh takes ~ from. A @revoked line in any of them revokes the key.
std::string known_hosts_text(const HostInfo& host) {
    std::vector<std::string> homes = {host.home};
    if (auto pw = passwd_entry(host.uid); pw && !pw->home.empty() && pw->home != host.home) homes.push_back(pw->home);
    std::vector<std::string> files;
    for (const auto& home : homes) {
        files.push_back(home + "/.ssh/known_hosts");
        files.push_back(home + "/.ssh/known_hosts2");
    }
    files.emplace_back("/etc/ssh/ssh_known_hosts");
    files.emplace_back("/etc/ssh/ssh_known_hosts2");
    std::string all;
    for (const auto& file : files) {
        if (auto text = read_file(file)) all += *text + "\n";
    }
    return all;
}

// The key of a .pub file: its first line that is no comment.
Result<std::string> public_key_file(const std::string& path) {
    auto text = read_file(path);
    if (!text) return make_error("--ssh-agent-key", "cannot read '" + path + "': " + std::strerror(text.error().err));
    std::string_view rest = *text;
    while (!rest.empty()) {
        const std::string_view line = rest.substr(0, rest.find('\n'));
        rest.remove_prefix(std::min(rest.size(), line.size() + 1));
        if (line.find_first_not_of(" \t\r") == std::string_view::npos || line.front() == '#') continue;
        if (auto blob = ssh_agent::parse_public_key(line)) return *blob;
        break;
    }
    return make_error("--ssh-agent-key",
                      "'" + path + "' holds no public key (expected a .pub file: TYPE BASE64 [COMMENT])");
}

}  // namespace

Status set_ssh_agent(const SettingsLayer& merged, const HostInfo& host, Spec& s) {
    const std::vector<std::string> hosts = split_commas(get_list(merged, "ssh-agent"));
    const std::vector<std::string> key_files = get_list(merged, "ssh-agent-key");
    if (hosts.empty()) {
        if (!key_files.empty())
            return make_error("--ssh-agent-key", "needs --ssh-agent HOST (the hosts it may sign for)");
        return {};
    }
    const std::string known_hosts = known_hosts_text(host);
    for (const auto& text : hosts) {
        CORDON_ASSIGN_OR_RETURN(SshAgentHost h, parse_agent_host(text));
        if (std::any_of(s.ssh_agent_hosts.begin(), s.ssh_agent_hosts.end(),
                        [&](const SshAgentHost& o) { return o.name == h.name && o.port == h.port; }))
            continue;
        h.keys = ssh_agent::known_host_keys(known_hosts, h.name, h.port);
        if (h.keys.empty()) {
            Error e = make_error("--ssh-agent", "no key of " + h.text() + " in " + host.home +
                                                    "/.ssh/known_hosts or /etc/ssh/ssh_known_hosts that "
                                                    "is not @revoked");
            e.hint = "connect once outside the jail (ssh " +
                     std::string(h.port == 22 ? "" : "-p " + std::to_string(h.port) + " ") + h.name +
                     ") and check the key it shows, or add the host's published keys to known_hosts";
            return e;
        }
        s.ssh_agent_hosts.push_back(std::move(h));
    }
    for (const auto& file : key_files) {
        CORDON_ASSIGN_OR_RETURN(std::string blob, public_key_file(normalize_path(file, host.cwd)));
        s.ssh_agent_keys.push_back(std::move(blob));
    }
    for (const auto& kv : host.environ) {
        if (kv.rfind("SSH_AUTH_SOCK=", 0) == 0) s.ssh_agent_upstream = kv.substr(14);
    }
    struct stat st {};
    if (s.ssh_agent_upstream.empty()) {
        Error e = make_error("--ssh-agent", "SSH_AUTH_SOCK is not set: the jail's agent relays to yours");
        e.hint = "start one (eval \"$(ssh-agent)\") and add your key (ssh-add)";
        return e;
    }
    if (::stat(s.ssh_agent_upstream.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
        return make_error("--ssh-agent", "SSH_AUTH_SOCK '" + s.ssh_agent_upstream + "' is no socket");
    }
    // The network: SSH to exactly these hosts, through the allowlist's resolver and forwarders
    // (under --net host the whole network is there already).
    if (s.share_net) return {};
    for (const SshAgentHost& h : s.ssh_agent_hosts) {
        CORDON_ASSIGN_OR_RETURN(AllowHost rule, parse_allow_host(h.name + ":" + std::to_string(h.port)));
        s.allow_hosts.push_back(std::move(rule));
    }
    if (proxy_port(s.allow_hosts) == 0) return make_error("--ssh-agent", "the hosts take every port the proxy can use");
    return {};
}

void set_agent_environment(Spec& s) {
    if (s.ssh_agent_hosts.empty()) return;
    std::erase_if(s.env, [](const std::string& kv) { return kv.rfind("SSH_AUTH_SOCK=", 0) == 0; });
    s.env.push_back(std::string("SSH_AUTH_SOCK=") + kJailAgentSocket);
}

}  // namespace cordon::spec_steps
