// CORDON_BWRAP_EXTRAS: a bwrap-mode run that asks for cordon's own additions (limits, the command
// policy with exec-time checks, the audit log) runs in cordon's jail instead: the ops become
// cordon's bwrap-style primitives on an empty root (--no-profile), and the extra options follow.
// An op or option that cordon's jail cannot carry over is an error, never dropped.
#include <sys/capability.h>

#include <charconv>
#include <climits>
#include <cstdlib>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string_view>

#include "cordon/bwrap.hpp"
#include "cordon/paths.hpp"

namespace cordon::bwrap {
namespace {

using K = Op::Kind;

Error unsupported(const std::string& option) {
    return make_error("bwrap", option + " is not supported with CORDON_BWRAP_EXTRAS (cordon's jail has no such step)");
}

// OP as cordon's primitives: a --perms before it stays before it (cordon takes it on --dir and
// --mount-tmpfs, the two ops here that have a mode).
Result<std::vector<std::string>> translate_op(const Op& op) {
    const std::string try_suffix = op.optional ? "-try" : "";
    if (op.perms && op.kind != K::Chmod && op.kind != K::Dir && op.kind != K::Tmpfs) return unsupported("--perms");
    if (op.size) return unsupported("--size");
    if (op.perms && op.kind != K::Chmod) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(*op.perms));
        const std::string_view name = op.kind == K::Dir ? "--dir" : "--mount-tmpfs";
        return std::vector<std::string>{"--perms", mode, std::string(name), op.dest};
    }
    switch (op.kind) {
        case K::Bind:
            return std::vector<std::string>{"--bind" + try_suffix, op.source, op.dest};
        case K::RoBind:
            return std::vector<std::string>{"--ro-bind" + try_suffix, op.source, op.dest};
        case K::DevBind:
            return std::vector<std::string>{"--dev-bind" + try_suffix, op.source, op.dest};
        case K::Symlink:
            return std::vector<std::string>{"--symlink", op.source, op.dest};
        case K::RemountRo:
            return std::vector<std::string>{"--remount-ro", op.dest};
        case K::Proc:
            return std::vector<std::string>{"--proc", op.dest};
        case K::Dev:
            return std::vector<std::string>{"--dev", op.dest};
        case K::Dir:
            return std::vector<std::string>{"--dir", op.dest};
        case K::Tmpfs:  // in order with the others, as bubblewrap's (cordon's --tmpfs is planned first)
            return std::vector<std::string>{"--mount-tmpfs", op.dest};
        case K::BindFd:
            return unsupported("--bind-fd");
        case K::RoBindFd:
            return unsupported("--ro-bind-fd");
        case K::Mqueue:
            return unsupported("--mqueue");
        case K::File:
            return unsupported("--file");
        case K::BindData:
            return unsupported("--bind-data");
        case K::RoBindData:
            return unsupported("--ro-bind-data");
        case K::Chmod:
            return unsupported("--chmod");
        case K::Overlay:
        case K::TmpOverlay:
        case K::RoOverlay:
            return unsupported("the overlays");
        case K::LockFile:
            return unsupported("--lock-file");
    }
    return unsupported("an op");
}

// The run-level options that cordon's jail has no counterpart for.
Status check_run_options(const Options& o) {
    const std::pair<bool, const char*> refused[] = {
        {o.userns_fd >= 0, "--userns"},        {o.userns2_fd >= 0, "--userns2"},
        {o.pidns_fd >= 0, "--pidns"},          {o.sync_fd >= 0, "--sync-fd"},
        {o.block_fd >= 0, "--block-fd"},       {o.userns_block_fd >= 0, "--userns-block-fd"},
        {o.info_fd >= 0, "--info-fd"},         {o.json_status_fd >= 0, "--json-status-fd"},
        {!o.seccomp_fds.empty(), "--seccomp"}, {o.assert_userns_disabled, "--assert-userns-disabled"},
    };
    for (const auto& [given, option] : refused) {
        if (given) return unsupported(option);
    }
    return {};
}

// A bind of a host path onto the same path, none of whose components is a symlink (else the
// mount lands where the link leads, which a bind of a directory above does not cover).
bool identity_bind(const Op& op) {
    if ((op.kind != K::Bind && op.kind != K::RoBind) || op.source.empty() || op.source[0] != '/') return false;
    const std::string path = normalize_path(op.source, "/");
    if (path != normalize_path(op.dest, "/")) return false;
    char real[PATH_MAX];
    return ::realpath(path.c_str(), real) != nullptr && path == real;
}

// The identity binds before OPS[I] that it covers, when OPS[I] is an identity bind of a directory
// above them (srt binds its proxy socket, then --ro-bind / /): bubblewrap shows the same host
// file through OPS[I] then, so binding it again right after shows what bubblewrap shows. In
// cordon's jail that is not the same for a root caller, whose jail sees root's own files, outside
// the system's trees, only through a bind of their own (cordon(1), ROOT CALLERS): the socket
// would be nobody's and refuse the connection.
// IDENTITY[K] is identity_bind(OPS[K]), found once for the whole command line.
std::vector<Op> covered_identity_binds(const std::vector<Op>& ops, const std::vector<bool>& identity, size_t i) {
    std::vector<Op> covered;
    if (!identity[i]) return covered;
    const std::string above = normalize_path(ops[i].dest, "/");
    for (size_t j = 0; j < i; ++j) {
        if (!identity[j]) continue;
        const std::string dest = normalize_path(ops[j].dest, "/");
        if (dest == above || !path_at_or_under(dest, above)) continue;
        // Only the last bind of a path counts, and only if nothing after it, up to OPS[I], changed
        // the path (a later op on it, or one above it, is what bubblewrap covered instead).
        const bool superseded = std::any_of(ops.begin() + static_cast<long>(j) + 1, ops.begin() + static_cast<long>(i),
                                            [&](const Op& later) {
                                                const std::string d = normalize_path(later.dest, "/");
                                                return path_at_or_under(dest, d) || path_at_or_under(d, dest);
                                            });
        if (!superseded) covered.push_back(ops[j]);
    }
    return covered;
}

}  // namespace

std::vector<std::string> command_environ(const Options& o, const std::string& cwd) {
    std::vector<std::string> out;
    for (const std::string& e : o.env) {
        if (e.rfind("PWD=", 0) == 0 || e.rfind("CORDON_BWRAP_EXTRAS=", 0) == 0 ||
            e.rfind(std::string(kCommandEnvVar) + "=", 0) == 0)
            continue;
        out.push_back(e);
    }
    out.push_back("PWD=" + (o.chdir ? *o.chdir : cwd));
    return out;
}

std::string encode_environ(const std::vector<std::string>& env) {
    std::string out;
    for (const auto& e : env) out.append(std::to_string(e.size())).append(":").append(e);
    return out;
}

std::optional<std::vector<std::string>> decode_environ(std::string_view text) {
    std::vector<std::string> out;
    while (!text.empty()) {
        size_t len = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), len);
        const size_t digits = static_cast<size_t>(end - text.data());
        if (ec != std::errc{} || digits == 0 || digits >= text.size() || text[digits] != ':' ||
            len > text.size() - digits - 1)
            return std::nullopt;
        out.emplace_back(text.substr(digits + 1, len));
        text.remove_prefix(digits + 1 + len);
    }
    return out;
}

Result<std::vector<std::string>> cordon_command_line(const Options& o, const std::string& extras, bool privileged) {
    CORDON_TRY(check_run_options(o));
    // --cap-add/--cap-drop: the set bubblewrap would leave (a root caller's starts full), kept in
    // cordon's jail, whose user namespace is the one they apply to. Without them, nothing.
    std::vector<int> keep;
    if (!o.caps.empty()) {
        CORDON_ASSIGN_OR_RETURN(keep, capabilities(o, privileged));
    }
    std::vector<std::string> extra_words;
    std::istringstream in(extras);
    for (std::string w; in >> w;) extra_words.push_back(w);
    std::vector<std::string> out{"--no-profile"};
    const bool has_policy = std::any_of(extra_words.begin(), extra_words.end(), [](const std::string& w) {
        return w == "--policy" || w.rfind("--policy=", 0) == 0;
    });
    if (!has_policy) out.emplace_back("--no-policy");
    std::vector<bool> identity;
    identity.reserve(o.ops.size());
    for (const Op& op : o.ops) identity.push_back(identity_bind(op));
    for (size_t i = 0; i < o.ops.size(); ++i) {
        auto words = translate_op(o.ops[i]);
        if (!words) return words.error();
        out.insert(out.end(), words->begin(), words->end());
        for (const Op& earlier : covered_identity_binds(o.ops, identity, i)) {
            const bool readonly = o.ops[i].kind == K::RoBind;  // shown as the bind that covers it shows it
            out.insert(out.end(), {std::string(readonly ? "--ro-bind" : "--bind") + (earlier.optional ? "-try" : ""),
                                   earlier.source, earlier.dest});
        }
    }
    // cordon's jail always has its own pid, ipc and uts namespaces; only the network is a choice.
    // An allowlist among the extras narrows a shared network to its hosts (cordon(1), NETWORK);
    // it cannot widen a command line that asked for none.
    const bool allowlist = std::any_of(extra_words.begin(), extra_words.end(), [](const std::string& w) {
        return w == "--allow-host" || w.rfind("--allow-host=", 0) == 0;
    });
    if (allowlist && o.unshare_net) {
        return make_error("bwrap",
                          "--allow-host in CORDON_BWRAP_EXTRAS needs a shared network (--share-net), and "
                          "this command line unshares it");
    }
    if (!allowlist) out.insert(out.end(), {"--net", o.unshare_net ? "none" : "host"});
    if (!o.disable_userns) out.emplace_back("--allow-userns");
    if (o.uid) out.insert(out.end(), {"--uid", std::to_string(*o.uid)});
    if (o.gid) out.insert(out.end(), {"--gid", std::to_string(*o.gid)});
    if (o.hostname) out.insert(out.end(), {"--hostname", *o.hostname});
    if (o.chdir) out.insert(out.end(), {"--chdir", *o.chdir});
    if (o.new_session) out.emplace_back("--new-session");
    if (o.as_pid_1) out.emplace_back("--as-pid-1");
    if (o.argv0) out.insert(out.end(), {"--argv0", *o.argv0});
    for (int cap : keep) {
        char* name = ::cap_to_name(cap);
        out.insert(out.end(), {"--cap-add", name});
        ::cap_free(name);
    }
    out.insert(out.end(), extra_words.begin(), extra_words.end());
    out.emplace_back("--");
    out.insert(out.end(), o.argv.begin(), o.argv.end());
    return out;
}

}  // namespace cordon::bwrap
