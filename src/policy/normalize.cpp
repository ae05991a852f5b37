// Command lines to canonical flags and operands, per the program's own option syntax:
// -rf = -r -f, --rec = --recursive when unambiguous, -- ends options, option arguments skipped.
#include "cordon/policy/rules.hpp"

namespace cordon::policy {

const OptionSpec* ProgramSpec::find(std::string_view spelling) const {
    auto it = spellings.find(spelling);
    return it == spellings.end() ? nullptr : &options[it->second];
}

std::string ProgramSpec::canonical(std::string_view spelling) const {
    const OptionSpec* o = find(spelling);
    return o ? o->canonical : std::string(spelling);
}

const ProgramSpec* Policy::spec(std::string_view program) const {
    auto it = programs.find(program);
    return it == programs.end() ? nullptr : &it->second;
}

namespace {

// A long option by exact name or, where the program allows it, a unique prefix.
const OptionSpec* long_option(const ProgramSpec& spec, std::string_view name) {
    if (const OptionSpec* o = spec.find(name)) return o;
    if (!spec.abbreviations || name.size() < 3) return nullptr;
    const OptionSpec* found = nullptr;
    for (const auto& l : spec.longs) {
        if (l.compare(0, name.size(), name) != 0) continue;
        const OptionSpec* o = spec.find(l);
        if (found && found != o) return nullptr;  // ambiguous
        found = o;
    }
    return found;
}

}  // namespace

CommandLine normalize(const std::vector<Field>& argv, const ProgramSpec* spec) {
    CommandLine cl;
    if (argv.empty()) return cl;
    cl.path = argv[0].static_text();
    cl.program = std::string(basename(cl.path));
    bool only_operands = false;
    auto operand = [&](const Field& f) {
        std::string key;
        if (spec && f.pieces.size() > 0 && f.pieces[0].kind == Piece::Kind::Lit) {
            const std::string& t = f.pieces[0].text;
            size_t eq = t.find('=');
            if (eq != std::string::npos) {
                for (const auto& k : spec->key_value) {
                    if (t.compare(0, eq, k) == 0 && k.size() == eq) key = k;
                }
            }
        }
        cl.operands.push_back(key.empty() ? f : f.drop_prefix(key.size() + 1));
        cl.kv_keys.push_back(std::move(key));
        if (spec && !spec->permute) only_operands = true;
    };
    for (size_t i = 1; i < argv.size(); ++i) {
        const Field& f = argv[i];
        bool dash = f.starts_with("-") && !(f.is_static() && f.static_text() == "-");
        if (only_operands || !dash) {
            operand(f);
            continue;
        }
        if (!f.is_static()) {
            cl.flags.emplace_back("?");
            continue;
        }
        std::string t = f.static_text();
        if (t == "--") {
            only_operands = true;
            continue;
        }
        size_t eq = t.find('=');
        std::string name = t.substr(0, eq);
        // A spelling the program declares as a whole word (--recursive, or find's -delete).
        const OptionSpec* whole = spec ? spec->find(name) : nullptr;
        if (!whole && spec && t.compare(0, 2, "--") == 0) whole = long_option(*spec, name);
        if (whole) {
            cl.flags.push_back(whole->canonical);
            if (whole->arg == OptionSpec::Arg::Required && eq == std::string::npos) ++i;
            continue;
        }
        if (t.compare(0, 2, "--") == 0) {
            cl.flags.push_back(name);
            continue;
        }
        for (size_t k = 1; k < t.size(); ++k) {
            std::string s = std::string("-") + t[k];
            const OptionSpec* o = spec ? spec->find(s) : nullptr;
            if (!o) {
                cl.flags.push_back(s);
                continue;
            }
            cl.flags.push_back(o->canonical);
            if (o->arg == OptionSpec::Arg::Required && k + 1 == t.size()) ++i;
            if (o->arg != OptionSpec::Arg::None) break;
        }
    }
    return cl;
}

}  // namespace cordon::policy
