// The readers of git's small formats that RepoWatch (leftovers.hpp) judges by: a .git file's
// "gitdir: " path and a commondir's path, as git's read_gitfile_gently and get_common_dir_noenv
// read them, and the config that either leads to. Any bytes: no crash, leak or hang, and what
// they say holds together with git's rules, which a stricter or looser reader would break: the
// path keeps every byte before a NUL but the file's trailing newlines and carriage returns, a
// .git file is refused only without its exact prefix or without a path, and writing a path
// back reads the same path. (The comparison with the real git is t_git_format.sh's.)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cordon/git_config.hpp"

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

// TEXT with its trailing newlines and carriage returns dropped, cut at a NUL: git's reading,
// written the other way round (index arithmetic instead of a loop over the view).
std::string expected_path(std::string_view text) {
    size_t end = text.find_last_not_of("\r\n");
    text = end == std::string_view::npos ? std::string_view() : text.substr(0, end + 1);
    return std::string(text.substr(0, text.find('\0')));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    const std::string common = cordon::git_commondir_path(text);
    check(common == expected_path(text));
    check(common.find('\0') == std::string::npos && common.size() <= size);

    const auto path = cordon::git_file_path(text);
    constexpr std::string_view prefix = "gitdir: ";
    const bool prefixed = text.substr(0, prefix.size()) == prefix;
    const std::string_view rest = prefixed ? text.substr(prefix.size()) : std::string_view();
    const bool has_path = prefixed && rest.find_last_not_of("\r\n") != std::string_view::npos;
    check(path.has_value() == has_path);
    if (path) {
        check(*path == expected_path(rest));
        // A path written back as git writes one reads the same, whatever else the file held.
        if (!path->empty() && path->back() != '\n' && path->back() != '\r') {
            check(cordon::git_file_path(std::string(prefix) + *path + "\n") == *path);
        }
    }

    // The same bytes as a config: git_config_fuzz's checks are that target's; here only that
    // it ends, on text whose first line may be a .git file's.
    (void)cordon::git_config_unsafe(text);
    return 0;
}
