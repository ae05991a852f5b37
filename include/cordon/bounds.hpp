// What the jail can make the supervisor hold, print or write, bounded (cordon(1), BOUNDS). The
// supervisor runs outside the jail's cgroup, so --memory does not limit it: every record that
// grows with what the jail does (a denied exec, a refused connection, a line on stderr) is cut
// to a size here, and past a count only counted. Decisions never see these cuts: the policy
// judges the whole argv, and only what is kept of it afterwards is clipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cordon {

// How much of one argv a record keeps.
struct ArgvBounds {
    size_t max_words = 64;
    size_t max_word_bytes = 512;
    size_t max_total_bytes = 4096;
};
// A denial on stderr and in --status-json; an --audit record, which may say more.
inline constexpr ArgvBounds kRecordArgv{};
inline constexpr ArgvBounds kAuditArgv{256, 4096, 32768};
// Any other text of a record that the jail chooses (a cwd, a path, a reason).
inline constexpr size_t kMaxRecordText = 4096;

// Denials kept in full in --status-json, each kind (exec, network); the rest are counted.
inline constexpr size_t kMaxDenials = 100;
// Lines on stderr of each kind (denied execs, refused connections) before they are only
// counted, for one summary line at the end.
inline constexpr size_t kMaxStderrLines = 20;

// An argv as a record keeps it: the first words, each cut at a UTF-8 boundary, until the total
// is reached. TRUNCATED tells that anything was cut; ARGC and BYTES are the original's (its
// words' bytes, each with its NUL, as the kernel counts them).
struct ArgvRecord {
    std::vector<std::string> argv;
    bool truncated = false;
    size_t argc = 0;
    size_t bytes = 0;
};
[[nodiscard]] ArgvRecord clip_argv(const std::vector<std::string>& argv, const ArgvBounds& bounds);

// TEXT in at most MAX bytes: unchanged when it fits, else its start (cut at a UTF-8 boundary)
// and a marker that says how many bytes were left out.
[[nodiscard]] std::string clip_text(std::string_view text, size_t max = kMaxRecordText);

// The first MAX records kept, the others counted.
class BoundedRecords {
public:
    explicit BoundedRecords(size_t max = kMaxDenials) : max_(max) {}
    // False when RECORD was only counted.
    bool add(std::string record) {
        if (kept_.size() >= max_) {
            ++dropped_;
            return false;
        }
        kept_.push_back(std::move(record));
        return true;
    }
    [[nodiscard]] const std::vector<std::string>& kept() const { return kept_; }
    [[nodiscard]] uint64_t dropped() const { return dropped_; }

private:
    size_t max_;
    std::vector<std::string> kept_;
    uint64_t dropped_ = 0;
};

// Lines of one kind on stderr: the first MAX are printed, the others counted for a summary.
class LineBudget {
public:
    explicit LineBudget(size_t max = kMaxStderrLines) : max_(max) {}
    // Whether this line may be printed.
    bool take() {
        if (shown_ < max_) {
            ++shown_;
            return true;
        }
        ++held_;
        return false;
    }
    [[nodiscard]] uint64_t held() const { return held_; }

private:
    size_t max_;
    size_t shown_ = 0;
    uint64_t held_ = 0;
};

}  // namespace cordon
