// CORDON_BWRAP_EXTRAS: a bwrap-mode run that asks for cordon's own additions (limits, the command
// policy with exec-time checks, the audit log) runs in cordon's jail instead: the ops become
// cordon's bwrap-style primitives on an empty root (--no-profile), and the extra options follow.
// An op or option that cordon's jail cannot carry over is an error, never dropped.
#include <algorithm>
#include <sstream>

#include "cordon/bwrap.hpp"

namespace cordon::bwrap {
namespace {

using K = Op::Kind;

Error unsupported(const std::string& option) {
    return make_error("bwrap", option + " is not supported with CORDON_BWRAP_EXTRAS (cordon's jail has no such step)");
}

Result<std::vector<std::string>> translate_op(const Op& op) {
    const std::string try_suffix = op.optional ? "-try" : "";
    if (op.perms && op.kind != K::Chmod) return unsupported("--perms");
    if (op.size) return unsupported("--size");
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
        case K::Tmpfs:
            return std::vector<std::string>{"--tmpfs", op.dest};
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
        {!o.seccomp_fds.empty(), "--seccomp"}, {o.as_pid_1, "--as-pid-1"},
        {o.argv0.has_value(), "--argv0"},      {o.assert_userns_disabled, "--assert-userns-disabled"},
    };
    for (const auto& [given, option] : refused) {
        if (given) return unsupported(option);
    }
    for (const CapChange& c : o.caps) {
        if (!c.add) return unsupported("--cap-drop");
    }
    return {};
}

}  // namespace

Result<std::vector<std::string>> cordon_command_line(const Options& o, const std::string& extras) {
    CORDON_TRY(check_run_options(o));
    std::vector<std::string> extra_words;
    std::istringstream in(extras);
    for (std::string w; in >> w;) extra_words.push_back(w);
    std::vector<std::string> out{"--no-profile"};
    const bool has_policy = std::find(extra_words.begin(), extra_words.end(), "--policy") != extra_words.end();
    if (!has_policy) out.emplace_back("--no-policy");
    for (const Op& op : o.ops) {
        auto words = translate_op(op);
        if (!words) return words.error();
        out.insert(out.end(), words->begin(), words->end());
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
    for (const CapChange& c : o.caps) out.insert(out.end(), {"--cap-add", c.name});
    out.insert(out.end(), extra_words.begin(), extra_words.end());
    out.emplace_back("--");
    out.insert(out.end(), o.argv.begin(), o.argv.end());
    return out;
}

}  // namespace cordon::bwrap
