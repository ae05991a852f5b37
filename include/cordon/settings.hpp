// Settings: the keys shared by the command line and profile files (SPEC §3, §5).
//
// A profile file and the command line each produce one SettingsLayer: a map from long option
// name to value. Layers merge in order (profiles, then the command line): scalar keys are
// overridden, list keys accumulate. The merged layer is then validated into an immutable Spec.
#pragma once

#ifdef CORDON_JAIL
#error "the jail does not see the CLI: it takes a Spec (CMakeLists.txt defines CORDON_JAIL for src/jail)"
#endif
#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/spec.hpp"  // MountRequest

namespace cordon {

enum class KeyType {
    String,    // --net none
    Bool,      // --allow-userns
    UInt,      // --uid 1000
    Size,      // --memory 2G (a Quantity: bytes)
    Duration,  // --timeout 90s (a Quantity: milliseconds)
    List,      // --ro PATH (repeatable, accumulates)
    PairList,  // --setenv NAME VALUE
    Ops,       // --bind SRC DEST and the other bwrap-style primitives: ordered, accumulate
};

struct KeyInfo {
    const char* name;  // long option name == profile key
    KeyType type;
    const char* metavar;  // for --help
    const char* help;
    bool profile_ok;  // may appear in a profile file
    int arity;        // values per occurrence (Ops and PairList: 1 or 2)
};

// Every key cordon knows, in --help order.
const std::vector<KeyInfo>& all_keys();
const KeyInfo* find_key(const std::string& name);

// One ordered bwrap-style primitive (--bind SRC DEST, --dir DEST, ...) and where it was given.
struct OpValue {
    MountRequest request;
    std::string origin;  // "command line" or "file:line:col"
    bool operator==(const OpValue&) const = default;
};
// The request that option KEY ("ro-bind-try", one of the keys of type Ops) makes with ARGS:
// DEST, or SRC DEST (the key's arity).
MountRequest mount_request(const std::string& key, std::vector<std::string> args);

// A Size or Duration key's value, converted once where it is given (the command line or a
// profile) and kept with its text, which messages and `cordon profile show` quote.
struct Quantity {
    uint64_t value = 0;  // bytes (Size) or milliseconds (Duration)
    std::string text;    // as written
    bool operator==(const Quantity&) const = default;
};

using PairValue = std::pair<std::string, std::string>;
using Value = std::variant<std::string, bool, uint64_t, Quantity, std::vector<std::string>, std::vector<PairValue>,
                           std::vector<OpValue>>;

// One profile's or the command line's settings (the command policy's layers are another thing:
// PolicySet::Layer in cordon/policy.hpp).
struct SettingsLayer {
    std::string origin;  // "command line" or the profile's path
    std::map<std::string, Value> values;
    std::map<std::string, std::string> where;  // key -> "file:line:col" for messages
    // For list keys: where each element came from, parallel to the list (for `profile show`).
    std::map<std::string, std::vector<std::string>> item_where;
};

// Merge `top` over `base`: scalars replace, lists append.
void merge_layer(SettingsLayer& base, const SettingsLayer& top);

// Accessors on a merged layer.
std::optional<std::string> get_string(const SettingsLayer& l, const std::string& key);
bool get_bool(const SettingsLayer& l, const std::string& key, bool fallback = false);
std::optional<uint64_t> get_uint(const SettingsLayer& l, const std::string& key);
std::optional<Quantity> get_quantity(const SettingsLayer& l, const std::string& key);
std::vector<std::string> get_list(const SettingsLayer& l, const std::string& key);
std::vector<PairValue> get_pairs(const SettingsLayer& l, const std::string& key);
std::vector<OpValue> get_ops(const SettingsLayer& l);

// TEXT as the value of a key of TYPE Size or Duration: the one converter for the command line
// and profiles. Errors are parse_size's or parse_duration_ms's.
Result<Quantity> parse_quantity(KeyType type, const std::string& text);
// "512K", "64M", "2G", "1048576" -> bytes.
Result<uint64_t> parse_size(const std::string& text);
// "90s", "10m", "1h", "1h30m", "250ms", "5" (seconds) -> milliseconds.
Result<uint64_t> parse_duration_ms(const std::string& text);

}  // namespace cordon
