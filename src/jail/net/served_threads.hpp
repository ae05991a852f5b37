// The threads of a server the supervisor runs for the jail (the network filter, net_proxy.cpp;
// the SSH agent relay, ssh_agent_relay.cpp): an accept thread and a thread per connection,
// counted, with every socket they wait on registered, so that the end of the run can shut those
// down and so end each wait at once. Internal to src/jail/net.
#pragma once

#include <sys/socket.h>

#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "cordon/fd.hpp"

namespace cordon {

class ServedThreads final {
public:
    // FN in a detached thread of its own, counted until it returns, with SIGPIPE blocked (a
    // write to a peer that is gone fails with EPIPE instead of killing cordon; splice(2) has no
    // MSG_NOSIGNAL). False, FN not run, when LIMIT threads run already, or when no thread can be
    // had (a jail of the caller's uid can take all of its RLIMIT_NPROC): the caller closes what
    // it cannot serve. FN owns what it needs (the server's state by shared_ptr, so this outlives
    // it).
    template <class Fn>
    bool start(Fn fn, int limit = INT_MAX) {
        {
            std::lock_guard lock(mu_);
            if (active_ >= limit) return false;
            ++active_;
        }
        try {
            std::thread([this, fn = std::move(fn)]() mutable {
                sigset_t pipe;
                sigemptyset(&pipe);
                sigaddset(&pipe, SIGPIPE);
                ::pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
                fn();
                leave();
            }).detach();
            return true;
        } catch (const std::system_error&) {
            leave();
            return false;
        }
    }

    // Shuts down every registered socket, and each registered later, and wakes the accept
    // thread through the eventfd WAKE (-1: none) that it polls; true the first time.
    bool shut_down(int wake) {
        std::lock_guard lock(mu_);
        if (stopping_) return false;
        stopping_ = true;
        for (const int fd : open_) ::shutdown(fd, SHUT_RDWR);
        const uint64_t one = 1;
        if (wake >= 0) (void)::write(wake, &one, sizeof one);
        return true;
    }
    // Waits until no thread runs, at most WAIT (one stuck elsewhere, resolving a name, finds its
    // sockets shut down when it comes back, and ends with the rest of cordon).
    void wait(std::chrono::milliseconds wait) {
        std::unique_lock lock(mu_);
        idle_.wait_for(lock, wait, [&] { return active_ == 0; });
    }

    // A socket a thread waits on, registered while it lives.
    class Socket final {
    public:
        Socket(ServedThreads& threads, UniqueFd fd) : threads_(threads), fd_(std::move(fd)) {
            std::lock_guard lock(threads_.mu_);
            if (threads_.stopping_)
                ::shutdown(fd_.get(), SHUT_RDWR);
            else
                threads_.open_.insert(fd_.get());
        }
        ~Socket() {
            std::lock_guard lock(threads_.mu_);
            threads_.open_.erase(fd_.get());
        }
        Socket(const Socket&) = delete;
        Socket& operator=(const Socket&) = delete;
        [[nodiscard]] int get() const { return fd_.get(); }

    private:
        ServedThreads& threads_;
        UniqueFd fd_;
    };

private:
    void leave() {
        std::lock_guard lock(mu_);
        if (--active_ == 0) idle_.notify_all();
    }

    std::mutex mu_;
    std::condition_variable idle_;
    int active_ = 0;
    bool stopping_ = false;
    std::set<int> open_;
};

}  // namespace cordon
