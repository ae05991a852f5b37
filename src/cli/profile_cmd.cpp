// `cordon profile list` and `cordon profile show NAME [--json]`.
#include <dirent.h>
#include <unistd.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>

#include "cordon/builtin.hpp"
#include "cordon/diag.hpp"
#include "cordon/fd.hpp"
#include "cordon/json.hpp"
#include "cordon/paths.hpp"
#include "cordon/profile.hpp"
#include "cordon/registries.hpp"
#include "cordon/spec_builder.hpp"
#include "cordon/toml.hpp"

namespace cordon {

Vars profile_vars(const std::string& home, const std::string& user, unsigned uid, const std::string& workdir) {
    Vars vars = {{"HOME", home}, {"UID", std::to_string(uid)}, {"WORKDIR", workdir}};
    if (!user.empty()) {
        vars["USER"] = user;
    } else {
        vars.lazy_user = [uid] {
            auto pw = passwd_entry(uid);
            return pw ? pw->name : std::to_string(uid);
        };
    }
    auto env_or = [&](const char* name, const std::string& fallback) {
        const char* v = std::getenv(name);
        return (v && *v) ? std::string(v) : fallback;
    };
    vars["XDG_CACHE_HOME"] = env_or("XDG_CACHE_HOME", home.empty() ? "" : home + "/.cache");
    vars["XDG_CONFIG_HOME"] = config_home(home);
    const std::string cache = vars["XDG_CACHE_HOME"].empty() ? "" : vars["XDG_CACHE_HOME"] + "/cordon";
    for (auto& d : registry_vars(home, cache)) {
        // Once per run, whichever profiles use it.
        auto memo = std::make_shared<std::optional<Result<std::string>>>();
        vars.derived[d.name] = [memo, compute = std::move(d.compute)]() -> Result<std::string> {
            if (!*memo) *memo = compute();
            return **memo;
        };
    }
    return vars;
}

std::vector<ProfileEntry> list_profiles() {
    std::vector<ProfileEntry> out;
    std::map<std::string, size_t> index;
    for (const auto& dir : search_path("profiles", "CORDON_PROFILE_PATH")) {
        DIR* d = ::opendir(dir.c_str());
        if (!d) continue;
        std::vector<std::string> names;
        while (struct dirent* e = ::readdir(d)) {
            std::string n = e->d_name;
            if (n.size() > 5 && n[0] != '.' && n.compare(n.size() - 5, 5, ".toml") == 0 &&
                n.find(".seccomp.") == std::string::npos) {
                names.push_back(n.substr(0, n.size() - 5));
            }
        }
        ::closedir(d);
        std::sort(names.begin(), names.end());
        for (const auto& name : names) {
            std::string path = dir + "/" + name + ".toml";
            if (auto it = index.find(name); it != index.end()) {
                out[it->second].shadowed.push_back(path);
                continue;
            }
            ProfileEntry entry{name, path, "", {}};
            if (auto text = read_file(path)) {
                if (auto tbl = parse_toml(*text, path)) {
                    entry.description = (*tbl)["description"].value_or(std::string());
                } else {
                    entry.description = "(does not parse: cordon profile show " + name + " says why)";
                }
            }
            index[name] = out.size();
            out.push_back(entry);
        }
    }
    add_builtin_profiles(out);
    std::sort(out.begin(), out.end(), [](const ProfileEntry& a, const ProfileEntry& b) { return a.name < b.name; });
    return out;
}

namespace {

int usage() {
    diag::error("usage: cordon profile list | cordon profile show NAME|PATH [--json]");
    return 125;
}

std::string value_text(const Value& v) {
    if (auto* s = std::get_if<std::string>(&v)) return json_quote(*s);
    if (auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
    if (auto* u = std::get_if<uint64_t>(&v)) return std::to_string(*u);
    if (auto* q = std::get_if<Quantity>(&v)) return json_quote(q->text);
    return "";
}

// A primitive's arguments as a profile writes them: DEST, or SRC DEST.
std::vector<std::string> op_args(const MountRequest& r) {
    if (mount_request_has_source(r.kind)) return {r.source, r.dest};
    return {r.dest};
}

// Where element I of KEY's value came from (file:line:column), else where KEY was set.
std::string origin_of(const SettingsLayer& l, const std::string& key, size_t i) {
    auto it = l.item_where.find(key);
    if (it != l.item_where.end() && i < it->second.size()) return it->second[i];
    auto w = l.where.find(key);
    return w != l.where.end() ? w->second : std::string();
}

// KEY's value V as JSON, each element with where it came from.
std::string value_json(const SettingsLayer& l, const std::string& key, const Value& v) {
    if (key == "ops") {
        std::string arr = "[";
        bool first = true;
        for (const auto& op : std::get<std::vector<OpValue>>(v)) {
            JsonObject o;
            o.add("key", mount_request_option(op.request)).add("args", op_args(op.request)).add("from", op.origin);
            arr += (first ? "" : ",") + o.str();
            first = false;
        }
        return arr + "]";
    }
    if (auto* list = std::get_if<std::vector<std::string>>(&v)) {
        std::string arr = "[";
        for (size_t i = 0; i < list->size(); ++i) {
            JsonObject o;
            o.add("value", (*list)[i]).add("from", origin_of(l, key, i));
            arr += (i ? "," : "") + o.str();
        }
        return arr + "]";
    }
    if (auto* pairs = std::get_if<std::vector<PairValue>>(&v)) {
        std::string arr = "[";
        for (size_t i = 0; i < pairs->size(); ++i) {
            JsonObject o;
            o.add("name", (*pairs)[i].first).add("value", (*pairs)[i].second).add("from", origin_of(l, key, i));
            arr += (i ? "," : "") + o.str();
        }
        return arr + "]";
    }
    JsonObject o;
    o.add_raw("value", value_text(v)).add("from", origin_of(l, key, 0));
    return o.str();
}

// `cordon profile show NAME --json`: one object; the primitives under "primitives".
void print_json(const std::string& name, const SettingsLayer& l) {
    JsonObject obj;
    obj.add("profile", name);
    for (const auto& [key, v] : l.values) obj.add_raw(key == "ops" ? "primitives" : key, value_json(l, key, v));
    std::printf("%s\n", obj.str().c_str());
}

// KEY's value V as profile lines, each with a comment saying where it came from.
void print_value_toml(const SettingsLayer& l, const std::string& key, const Value& v) {
    if (key == "ops") {
        for (const auto& op : std::get<std::vector<OpValue>>(v)) {
            std::string args;
            for (const auto& a : op_args(op.request)) args += (args.empty() ? "" : ", ") + json_quote(a);
            std::printf("%s = [%s]  # %s\n", mount_request_option(op.request).c_str(), args.c_str(), op.origin.c_str());
        }
    } else if (auto* list = std::get_if<std::vector<std::string>>(&v)) {
        std::printf("%s = [\n", key.c_str());
        for (size_t i = 0; i < list->size(); ++i) {
            std::printf("  %s,  # %s\n", json_quote((*list)[i]).c_str(), origin_of(l, key, i).c_str());
        }
        std::printf("]\n");
    } else if (auto* pairs = std::get_if<std::vector<PairValue>>(&v)) {
        for (size_t i = 0; i < pairs->size(); ++i) {
            std::printf("%s.%s = %s  # %s\n", key.c_str(), (*pairs)[i].first.c_str(),
                        json_quote((*pairs)[i].second).c_str(), origin_of(l, key, i).c_str());
        }
    } else {
        std::printf("%s = %s  # %s\n", key.c_str(), value_text(v).c_str(), origin_of(l, key, 0).c_str());
    }
}

// `cordon profile show NAME`: the resolved profile in a profile file's own form.
void print_toml(const std::string& name, const SettingsLayer& l) {
    std::printf("# profile %s, fully resolved (each value with the file:line:column it came from)\n", name.c_str());
    for (const auto& [key, v] : l.values) print_value_toml(l, key, v);
}

int show(const std::string& name, bool json) {
    HostInfo host = current_host();
    auto layer = load_profiles({name}, profile_vars(host.home, host.user, host.uid, host.cwd), true);
    if (!layer) {
        diag::error(layer.error());
        return 125;
    }
    if (json)
        print_json(name, *layer);
    else
        print_toml(name, *layer);
    return 0;
}

}  // namespace

int main_profile(const std::vector<std::string>& args) {
    if (args.empty()) return usage();
    if (args[0] == "list" && args.size() == 1) {
        for (const auto& p : list_profiles()) {
            std::printf("%-12s %s\n             from %s\n", p.name.c_str(), p.description.c_str(), p.path.c_str());
            for (const auto& s : p.shadowed) std::printf("             shadows %s\n", s.c_str());
        }
        return 0;
    }
    if (args[0] == "show") {
        std::string name;
        bool json = false;
        for (size_t i = 1; i < args.size(); ++i) {
            if (args[i] == "--json")
                json = true;
            else if (name.empty() && args[i][0] != '-')
                name = args[i];
            else
                return usage();
        }
        if (name.empty()) return usage();
        return show(name, json);
    }
    return usage();
}

}  // namespace cordon
