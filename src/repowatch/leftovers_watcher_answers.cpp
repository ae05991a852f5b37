// The watcher's answers to a run (leftovers_watcher_daemon.hpp): 'S', the repositories now, and
// 'F', every directory with events since, each after a header that names the workdir.
#include <sys/socket.h>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "leftovers_watcher_daemon.hpp"

namespace cordon::watcher {

namespace {

using namespace wire;

void put32(std::string& out, uint32_t v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put64(std::string& out, uint64_t v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_str(std::string& out, const std::string& s) {
    put32(out, static_cast<uint32_t>(s.size()));
    out += s;
}

}  // namespace

std::string Daemon::answer_start() const {
    std::string body;
    uint32_t count = 0;
    for (uint32_t i : repos_) {
        const Node& n = nodes_[i];
        if (!n.live || (!n.head && !n.git)) continue;
        if (++count > kMaxRepos) return {};
        body += static_cast<char>((n.head ? 1 : 0) | (n.git ? 2 : 0));  // then the path
        put_str(body, rel(i));
        if (body.size() > kMaxAnswer) return {};
    }
    std::string out;
    put32(out, count);
    return out + body;
}

std::string Daemon::answer_finish(const Conn& c) const {
    if (c.epoch < dropped_to_) return {};
    // Each name once per directory: a file made, written and closed is three events.
    std::map<uint32_t, std::pair<std::set<std::string_view>, std::set<std::string_view>>> by_dir;
    for (const Event& e : log_) {
        if (e.seq <= c.epoch || !nodes_[e.node].live || nodes_[e.node].gen != e.gen) continue;
        auto& [made, other] = by_dir[e.node];
        if (e.kind == kMade) made.insert(e.name);
        if (e.kind == kEntry) other.insert(e.name);
    }
    std::string out;
    put32(out, static_cast<uint32_t>(by_dir.size()));
    for (const auto& [node, lists] : by_dir) {
        put_str(out, rel(node));
        for (const auto* list : {&lists.first, &lists.second}) {
            put32(out, static_cast<uint32_t>(list->size()));
            for (std::string_view name : *list) put_str(out, std::string(name));
        }
        if (out.size() > kMaxAnswer) return {};
    }
    return out;
}

// One request of a run: 'S' or 'F', answered after the queue is taken to its end.
void Daemon::serve(Conn& c) {
    char what = 0;
    if (::recv(c.fd.get(), &what, 1, MSG_DONTWAIT) != 1 || (what != 'S' && what != 'F')) {
        c.fd.reset();
        return;
    }
    std::string body;
    uint32_t status = 0;
    if (what == 'S') {
        c.started = true;
        c.epoch = seq_;
        body = answer_start();
    } else {
        body = c.started ? answer_finish(c) : std::string();
        c.started = false;
    }
    if (body.empty()) status = 1;
    std::string out;
    put32(out, kMagic);
    put32(out, status);
    put64(out, static_cast<uint64_t>(dev_));
    put64(out, static_cast<uint64_t>(root_ino_));
    put64(out, body.size());
    out += body;
    if (!write_all(c.fd.get(), out.data(), out.size())) c.fd.reset();
}

}  // namespace cordon::watcher
