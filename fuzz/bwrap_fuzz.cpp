// bwrap mode's command line (a client's generated argv) and the extras' translation of it into
// cordon's: NUL-separated words. Any input must parse or be refused with a message; a parsed one
// must translate or be refused with one; a translation must end with "--" and the command.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "cordon/bwrap.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<std::string> words;
    std::string word;
    for (size_t i = 0; i < size; ++i) {
        if (data[i] == 0) {
            words.push_back(word);
            word.clear();
        } else {
            word += static_cast<char>(data[i]);
        }
    }
    if (!word.empty()) words.push_back(word);
    for (const std::string& w : words) {
        if (w == "--args") return 0;  // reads a descriptor: not from bytes
    }
    auto parsed = cordon::bwrap::parse(words, {"PATH=/usr/bin:/bin", "HOME=/home/u"});
    if (!parsed) {
        if (parsed.error().why.empty()) std::abort();
        return 0;
    }
    if (parsed->help || parsed->version) return 0;
    for (bool privileged : {false, true}) {
        auto line = cordon::bwrap::cordon_command_line(*parsed, "--pids 5 --policy default", privileged);
        if (!line) {
            if (line.error().why.empty()) std::abort();
            continue;
        }
        const std::vector<std::string>& out = *line;
        const size_t n = parsed->argv.size();
        if (out.size() < n + 1 || out[out.size() - n - 1] != "--") std::abort();
        for (size_t i = 0; i < n; ++i) {
            if (out[out.size() - n + i] != parsed->argv[i]) std::abort();
        }
        if (out.empty() || out[0] != "--no-profile") std::abort();
    }
    return 0;
}
