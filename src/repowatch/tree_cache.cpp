// TreeCache (tree_cache.hpp): a small binary file. A header line, then the root and the listing
// time, then one record per directory: parent, dev, ino, ctime, flags and the name, all
// length-prefixed, so that any name (a newline in it too) comes back as it was.
#include "tree_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "cordon/fd.hpp"

namespace cordon {

namespace {

constexpr char kMagic[] = "cordon tree cache 2\n";
constexpr size_t kMaxFile = size_t{256} << 20;

template <typename T>
void put(std::string& out, T v) {
    char b[sizeof v];
    std::memcpy(b, &v, sizeof v);
    out.append(b, sizeof v);
}

class Reader {
public:
    explicit Reader(const std::string& s) : s_(s) {}
    template <typename T>
    bool get(T& v) {
        if (s_.size() - pos_ < sizeof v) return false;
        std::memcpy(&v, s_.data() + pos_, sizeof v);
        pos_ += sizeof v;
        return true;
    }
    bool get(std::string& v, size_t n) {
        if (s_.size() - pos_ < n) return false;
        v.assign(s_, pos_, n);
        pos_ += n;
        return true;
    }
    [[nodiscard]] bool done() const { return pos_ == s_.size(); }

private:
    const std::string& s_;
    size_t pos_ = 0;
};

bool read_dir(Reader& r, TreeCache::Dir& d) {
    uint8_t flags = 0;
    uint16_t len = 0;
    if (!r.get(d.parent) || !r.get(d.dev) || !r.get(d.ino) || !r.get(d.ctime_sec) || !r.get(d.ctime_nsec) ||
        !r.get(flags) || !r.get(len) || !r.get(d.name, len)) {
        return false;
    }
    d.has_head = flags & 1;
    d.has_git = flags & 2;
    d.complete = flags & 4;
    return true;
}

}  // namespace

std::optional<TreeCache> load_tree_cache(const std::string& path, const std::string& root) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) > kMaxFile) {
        return std::nullopt;
    }
    std::string s(static_cast<size_t>(st.st_size), '\0');
    if (::read(fd.get(), s.data(), s.size()) != static_cast<ssize_t>(s.size())) return std::nullopt;
    if (s.compare(0, sizeof kMagic - 1, kMagic) != 0) return std::nullopt;
    s.erase(0, sizeof kMagic - 1);
    Reader r(s);
    TreeCache c;
    uint32_t root_len = 0, count = 0;
    int64_t sec = 0;
    int64_t nsec = 0;
    if (!r.get(root_len) || !r.get(c.root, root_len) || c.root != root || !r.get(sec) || !r.get(nsec) ||
        !r.get(count)) {
        return std::nullopt;
    }
    c.listed_at.tv_sec = static_cast<time_t>(sec);
    c.listed_at.tv_nsec = static_cast<long>(nsec);
    c.dirs.resize(count);
    c.children.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
        TreeCache::Dir& d = c.dirs[i];
        if (!read_dir(r, d)) return std::nullopt;
        // Parents come first; only the first entry is the root.
        if ((i == 0) != (d.parent == TreeCache::kNoParent) || (i > 0 && d.parent >= i)) return std::nullopt;
        if (i > 0) c.children[d.parent].push_back(i);
    }
    if (!r.done()) return std::nullopt;
    return c;
}

bool save_tree_cache(const std::string& path, const TreeCache& c) {
    std::string out(kMagic);
    put(out, static_cast<uint32_t>(c.root.size()));
    out += c.root;
    put(out, static_cast<int64_t>(c.listed_at.tv_sec));
    put(out, static_cast<int64_t>(c.listed_at.tv_nsec));
    put(out, static_cast<uint32_t>(c.dirs.size()));
    for (const TreeCache::Dir& d : c.dirs) {
        if (d.name.size() > UINT16_MAX) return false;
        put(out, d.parent);
        put(out, d.dev);
        put(out, d.ino);
        put(out, d.ctime_sec);
        put(out, d.ctime_nsec);
        put(out, static_cast<uint8_t>((d.has_head ? 1 : 0) | (d.has_git ? 2 : 0) | (d.complete ? 4 : 0)));
        put(out, static_cast<uint16_t>(d.name.size()));
        out += d.name;
    }
    const std::string tmp = path + ".new." + std::to_string(::getpid());
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd || !write_all(fd.get(), out.data(), out.size()) || ::rename(tmp.c_str(), path.c_str()) != 0) {
        ::unlink(tmp.c_str());
        return false;
    }
    return true;
}

}  // namespace cordon
