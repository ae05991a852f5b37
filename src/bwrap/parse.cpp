// bubblewrap's command line, parsed into Options: an ordered op list plus run-level choices.
// Pure (apart from reading --args FDs), so the unit tests see every op as bubblewrap's man page
// describes it.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>

#include "cordon/bwrap.hpp"

namespace cordon::bwrap {
namespace {

using K = Op::Kind;

constexpr const char* kOverlaySrcAlone =
    "--overlay-src must be followed by another --overlay-src or one of --overlay, --tmp-overlay, or --ro-overlay";

// The state of one parse: --perms/--size waiting for their op, and what it has found.
struct Parser {
    Options out;
    std::optional<mode_t> pending_perms;
    std::optional<uint64_t> pending_size;
    std::vector<std::string> overlay_srcs;
};

Error fail(std::string text) {
    return make_error("bwrap", std::move(text));
}

Result<int> parse_fd(const std::string& value) {
    char* end = nullptr;
    errno = 0;
    const long fd = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || errno != 0 || fd < 0 || fd > 1 << 30) {
        return fail("Invalid fd: " + value);
    }
    return static_cast<int>(fd);
}

Result<uint32_t> parse_id(const std::string& option, const std::string& value) {
    char* end = nullptr;
    errno = 0;
    const unsigned long id = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || value[0] == '-' || *end != '\0' || errno != 0 || id >= UINT32_MAX) {
        return fail(option + " takes a numeric id, not " + value);
    }
    return static_cast<uint32_t>(id);
}

Result<mode_t> parse_mode(const std::string& option, const std::string& value) {
    char* end = nullptr;
    errno = 0;
    const unsigned long mode = std::strtoul(value.c_str(), &end, 8);
    if (value.empty() || value[0] == '-' || *end != '\0' || errno != 0 || mode > 07777) {
        return fail(option + " takes an octal mode of at most 07777, not " + value);
    }
    return static_cast<mode_t>(mode);
}

// --size: a byte count, at least 1 and at most SIZE_MAX/2 (what tmpfs's parser takes), digits only.
Result<uint64_t> parse_size(const std::string& value) {
    const bool digits =
        !value.empty() && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    errno = 0;
    const unsigned long long size = digits ? std::strtoull(value.c_str(), nullptr, 10) : 0;
    if (!digits || errno != 0 || size == 0 || size > SIZE_MAX / 2) {
        return fail("Invalid value for --size: " + value);
    }
    return static_cast<uint64_t>(size);
}

// --args FD: the NUL-separated words it holds.
Result<std::vector<std::string>> read_args_fd(int fd) {
    std::string data;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail("Failed to read --args " + std::to_string(fd) + ": " + std::strerror(errno));
        if (n == 0) break;
        data.append(buf, static_cast<size_t>(n));
    }
    std::vector<std::string> words;
    size_t start = 0;
    while (start < data.size()) {
        size_t end = data.find('\0', start);
        if (end == std::string::npos) end = data.size();
        words.push_back(data.substr(start, end - start));
        start = end + 1;
    }
    return words;
}

void set_env(std::vector<std::string>& env, const std::string& name, const std::optional<std::string>& value) {
    std::erase_if(env, [&](const std::string& e) { return e.compare(0, name.size() + 1, name + "=") == 0; });
    if (value) env.push_back(name + "=" + *value);
}

// An op that creates something: it takes the pending --perms (and --size, for --tmpfs).
Status add_op(Parser& p, Op op) {
    if (p.pending_size && op.kind != K::Tmpfs) return fail("--size must be followed by --tmpfs");
    op.perms = std::exchange(p.pending_perms, std::nullopt);
    op.size = std::exchange(p.pending_size, std::nullopt);
    p.out.ops.push_back(std::move(op));
    return {};
}

// What an option does with its values (VALUES has as many as the option's arity).
using Handler = std::function<Status(Parser&, const std::vector<std::string>&)>;
struct OptionDef {
    int arity;
    Handler handle;
};

Handler flag(bool Options::*member) {
    return [member](Parser& p, const std::vector<std::string>&) -> Status {
        p.out.*member = true;
        return {};
    };
}

Handler fd_option(int Options::*member, const std::string& option) {
    return [member, option](Parser& p, const std::vector<std::string>& v) -> Status {
        auto fd = parse_fd(v[0]);
        if (!fd) return fd.error();
        p.out.*member = *fd;
        return {};
    };
}

// --bind SRC DEST and its kin; TRY: the -try form.
Handler path_op(K kind, bool try_form = false) {
    return [kind, try_form](Parser& p, const std::vector<std::string>& v) -> Status {
        Op op;
        op.kind = kind;
        op.optional = try_form;
        if (v.size() == 2) op.source = v[0];
        op.dest = v.back();
        return add_op(p, std::move(op));
    };
}

// --file FD DEST and its kin: the source is a descriptor.
Handler fd_op(K kind, const std::string& option) {
    return [kind, option](Parser& p, const std::vector<std::string>& v) -> Status {
        auto fd = parse_fd(v[0]);
        if (!fd) return fd.error();
        Op op;
        op.kind = kind;
        op.fd = *fd;
        op.dest = v[1];
        return add_op(p, std::move(op));
    };
}

// The overlays take the --overlay-src layers given since the last one.
Handler overlay_op(K kind) {
    return [kind](Parser& p, const std::vector<std::string>& v) -> Status {
        Op op;
        op.kind = kind;
        op.overlay_srcs = std::exchange(p.overlay_srcs, {});
        if (kind == K::Overlay) {
            op.source = v[0];
            op.workdir = v[1];
        }
        op.dest = v.back();
        const std::string name = kind == K::Overlay      ? "--overlay"
                                 : kind == K::TmpOverlay ? "--tmp-overlay"
                                                         : "--ro-overlay";
        const size_t need = kind == K::RoOverlay ? 2 : 1;
        if (op.overlay_srcs.size() < need) {
            return fail(name + " requires at least " + (need == 2 ? "two" : "one") + " --overlay-src");
        }
        return add_op(p, std::move(op));
    };
}

void add_namespace_options(std::map<std::string, OptionDef, std::less<>>& t) {
    t["--unshare-user"] = {0, flag(&Options::unshare_user)};
    t["--unshare-user-try"] = {0, flag(&Options::unshare_user_try)};
    t["--unshare-ipc"] = {0, flag(&Options::unshare_ipc)};
    t["--unshare-pid"] = {0, flag(&Options::unshare_pid)};
    t["--unshare-net"] = {0, flag(&Options::unshare_net)};
    t["--unshare-uts"] = {0, flag(&Options::unshare_uts)};
    t["--unshare-cgroup"] = {0, flag(&Options::unshare_cgroup)};
    t["--unshare-cgroup-try"] = {0, flag(&Options::unshare_cgroup_try)};
    t["--unshare-all"] = {0, [](Parser& p, const std::vector<std::string>&) -> Status {
                              Options& o = p.out;
                              o.unshare_user_try = o.unshare_ipc = o.unshare_pid = o.unshare_net = o.unshare_uts =
                                  o.unshare_cgroup_try = true;
                              return {};
                          }};
    t["--share-net"] = {0, [](Parser& p, const std::vector<std::string>&) -> Status {
                            p.out.unshare_net = false;
                            return {};
                        }};
    t["--userns"] = {1, fd_option(&Options::userns_fd, "--userns")};
    t["--userns2"] = {1, fd_option(&Options::userns2_fd, "--userns2")};
    t["--pidns"] = {1, fd_option(&Options::pidns_fd, "--pidns")};
    t["--disable-userns"] = {0, flag(&Options::disable_userns)};
    t["--assert-userns-disabled"] = {0, flag(&Options::assert_userns_disabled)};
    t["--uid"] = {1, [](Parser& p, const std::vector<std::string>& v) -> Status {
                      auto id = parse_id("--uid", v[0]);
                      if (!id) return id.error();
                      p.out.uid = *id;
                      return {};
                  }};
    t["--gid"] = {1, [](Parser& p, const std::vector<std::string>& v) -> Status {
                      auto id = parse_id("--gid", v[0]);
                      if (!id) return id.error();
                      p.out.gid = *id;
                      return {};
                  }};
    t["--hostname"] = {1, [](Parser& p, const std::vector<std::string>& v) -> Status {
                           p.out.hostname = v[0];
                           return {};
                       }};
}

void add_filesystem_options(std::map<std::string, OptionDef, std::less<>>& t) {
    t["--bind"] = {2, path_op(K::Bind)};
    t["--bind-try"] = {2, path_op(K::Bind, true)};
    t["--ro-bind"] = {2, path_op(K::RoBind)};
    t["--ro-bind-try"] = {2, path_op(K::RoBind, true)};
    t["--dev-bind"] = {2, path_op(K::DevBind)};
    t["--dev-bind-try"] = {2, path_op(K::DevBind, true)};
    t["--bind-fd"] = {2, fd_op(K::BindFd, "--bind-fd")};
    t["--ro-bind-fd"] = {2, fd_op(K::RoBindFd, "--ro-bind-fd")};
    t["--remount-ro"] = {1, path_op(K::RemountRo)};
    t["--proc"] = {1, path_op(K::Proc)};
    t["--dev"] = {1, path_op(K::Dev)};
    t["--tmpfs"] = {1, path_op(K::Tmpfs)};
    t["--mqueue"] = {1, path_op(K::Mqueue)};
    t["--dir"] = {1, path_op(K::Dir)};
    t["--symlink"] = {2, path_op(K::Symlink)};
    t["--lock-file"] = {1, path_op(K::LockFile)};
    t["--file"] = {2, fd_op(K::File, "--file")};
    t["--bind-data"] = {2, fd_op(K::BindData, "--bind-data")};
    t["--ro-bind-data"] = {2, fd_op(K::RoBindData, "--ro-bind-data")};
    t["--chmod"] = {2, [](Parser& p, const std::vector<std::string>& v) -> Status {
                        auto mode = parse_mode("--chmod", v[0]);
                        if (!mode) return mode.error();
                        Op op;
                        op.kind = K::Chmod;
                        op.dest = v[1];
                        op.perms = *mode;
                        p.out.ops.push_back(std::move(op));
                        return {};
                    }};
    t["--overlay-src"] = {1, [](Parser& p, const std::vector<std::string>& v) -> Status {
                              p.overlay_srcs.push_back(v[0]);
                              return {};
                          }};
    t["--overlay"] = {3, overlay_op(K::Overlay)};
    t["--tmp-overlay"] = {1, overlay_op(K::TmpOverlay)};
    t["--ro-overlay"] = {1, overlay_op(K::RoOverlay)};
    t["--perms"] = {1, [](Parser& p, const std::vector<std::string>& v) -> Status {
                        if (p.pending_perms) return fail("--perms is given twice for the same argument");
                        auto mode = parse_mode("--perms", v[0]);
                        if (!mode) return mode.error();
                        p.pending_perms = *mode;
                        return {};
                    }};
    t["--size"] = {1, [](Parser& p, const std::vector<std::string>& v) -> Status {
                       if (p.pending_size) return fail("--size is given twice for the same argument");
                       auto size = parse_size(v[0]);
                       if (!size) return size.error();
                       p.pending_size = *size;
                       return {};
                   }};
}

void add_process_options(std::map<std::string, OptionDef, std::less<>>& t) {
    t["--chdir"] = {1, [](Parser& p, const std::vector<std::string>& v) -> Status {
                        if (p.out.chdir) p.out.warnings.emplace_back("Only the last --chdir option will take effect");
                        p.out.chdir = v[0];
                        return {};
                    }};
    t["--argv0"] = {1, [](Parser& p, const std::vector<std::string>& v) -> Status {
                        if (p.out.argv0) return fail("--argv0 used multiple times");
                        p.out.argv0 = v[0];
                        return {};
                    }};
    t["--clearenv"] = {0, [](Parser& p, const std::vector<std::string>&) -> Status {
                           p.out.env.clear();
                           return {};
                       }};
    t["--setenv"] = {2, [](Parser& p, const std::vector<std::string>& v) -> Status {
                         set_env(p.out.env, v[0], v[1]);
                         return {};
                     }};
    t["--unsetenv"] = {1, [](Parser& p, const std::vector<std::string>& v) -> Status {
                           set_env(p.out.env, v[0], std::nullopt);
                           return {};
                       }};
    t["--sync-fd"] = {1, fd_option(&Options::sync_fd, "--sync-fd")};
    t["--block-fd"] = {1, fd_option(&Options::block_fd, "--block-fd")};
    t["--userns-block-fd"] = {1, fd_option(&Options::userns_block_fd, "--userns-block-fd")};
    t["--info-fd"] = {1, fd_option(&Options::info_fd, "--info-fd")};
    t["--json-status-fd"] = {1, fd_option(&Options::json_status_fd, "--json-status-fd")};
    for (const char* name : {"--seccomp", "--add-seccomp-fd"}) {
        const bool single = std::string_view(name) == "--seccomp";
        t[name] = {1, [single](Parser& p, const std::vector<std::string>& v) -> Status {
                       auto fd = parse_fd(v[0]);
                       if (!fd) return fd.error();
                       if (single && p.out.seccomp_single) return fail("--seccomp cannot be repeated");
                       if (!p.out.seccomp_fds.empty() && single != p.out.seccomp_single) {
                           return fail(single ? "--seccomp cannot be combined with --add-seccomp-fd"
                                              : "--add-seccomp-fd cannot be combined with --seccomp");
                       }
                       p.out.seccomp_single = single;
                       p.out.seccomp_fds.push_back(*fd);
                       return {};
                   }};
    }
    t["--new-session"] = {0, flag(&Options::new_session)};
    t["--die-with-parent"] = {0, flag(&Options::die_with_parent)};
    t["--as-pid-1"] = {0, flag(&Options::as_pid_1)};
    t["--level-prefix"] = {0, flag(&Options::level_prefix)};
    for (const char* name : {"--cap-add", "--cap-drop"}) {
        const bool add = std::string_view(name) == "--cap-add";
        t[name] = {1, [add](Parser& p, const std::vector<std::string>& v) -> Status {
                       p.out.caps.push_back({add, v[0]});
                       return {};
                   }};
    }
    for (const char* name : {"--exec-label", "--file-label"}) {
        t[name] = {1, [](Parser&, const std::vector<std::string>&) -> Status {
                       return fail("labeling not supported on this system");
                   }};
    }
    t["--help"] = {0, flag(&Options::help)};
    t["--version"] = {0, flag(&Options::version)};
}

const std::map<std::string, OptionDef, std::less<>>& option_table() {
    static const auto table = [] {
        std::map<std::string, OptionDef, std::less<>> t;
        add_namespace_options(t);
        add_filesystem_options(t);
        add_process_options(t);
        return t;
    }();
    return table;
}

std::string arity_text(int arity) {
    switch (arity) {
        case 1:
            return "takes an argument";
        case 2:
            return "takes two arguments";
        default:
            return "takes three arguments";
    }
}

// The options of WORDS from NEXT, up to "--" (taken) or the first word that is none; NEXT is
// left after them. As bubblewrap parses them: an --args file's words are options of their own,
// a level below (IN_FILE), whose first non-option or "--" ends the file, not the command line;
// an option's values never run past the end of the words they are in; and a file holds no
// --args.
Status parse_options(Parser& p, const std::vector<std::string>& words, size_t& next, bool in_file) {
    const auto& table = option_table();
    while (next < words.size()) {
        const std::string& word = words[next];
        if (word == "--") {
            ++next;
            break;
        }
        if (word.empty() || word[0] != '-') break;
        ++next;
        if (word == "--args") {
            if (in_file) return fail("--args not supported in arguments file");
            if (next >= words.size()) return fail("--args takes an argument");
            auto fd = parse_fd(words[next++]);
            if (!fd) return fd.error();
            CORDON_ASSIGN_OR_RETURN(const std::vector<std::string> data, read_args_fd(*fd));
            size_t at = 0;
            CORDON_TRY(parse_options(p, data, at, true));
            if (p.out.help || p.out.version) return {};
            continue;
        }
        auto it = table.find(word);
        if (it == table.end()) return fail("Unknown option " + word);
        if (!p.overlay_srcs.empty() && word.find("overlay") == std::string::npos) return fail(kOverlaySrcAlone);
        const size_t arity = static_cast<size_t>(it->second.arity);
        if (words.size() - next < arity) return fail(word + " " + arity_text(it->second.arity));
        std::vector<std::string> values(words.begin() + static_cast<std::ptrdiff_t>(next),
                                        words.begin() + static_cast<std::ptrdiff_t>(next + arity));
        next += arity;
        CORDON_TRY(it->second.handle(p, values));
        if (p.out.help || p.out.version) return {};
    }
    return {};
}

}  // namespace

Result<Options> parse(const std::vector<std::string>& args, std::vector<std::string> env) {
    Parser p;
    p.out.env = std::move(env);
    size_t next = 0;
    CORDON_TRY(parse_options(p, args, next, false));
    if (p.out.help || p.out.version) return std::move(p.out);
    if (!p.overlay_srcs.empty())
        return fail(
            "--overlay-src must be followed by another --overlay-src or one of --overlay, --tmp-overlay, or "
            "--ro-overlay");
    p.out.argv.assign(args.begin() + static_cast<std::ptrdiff_t>(next), args.end());
    return std::move(p.out);
}

}  // namespace cordon::bwrap
