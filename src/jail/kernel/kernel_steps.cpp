// The kernel steps both jails take (kernel_steps.hpp). No allocation: the jail's init and
// bwrap mode's child call these after clone.
#include "cordon/kernel_steps.hpp"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "cordon/fd.hpp"

namespace cordon::kernel {

namespace {

// DIR/NAME opened for writing and DATA written to it in one write(2) (a map must come whole).
// -1 with errno on failure.
int write_proc_file(const char* dir, const char* name, const char* data, size_t len) {
    char path[128];
    const int n = std::snprintf(path, sizeof path, "%s/%s", dir, name);
    if (n < 0 || static_cast<size_t>(n) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    UniqueFd fd(retry_eintr([&] { return ::open(path, O_WRONLY | O_CLOEXEC); }));
    if (!fd) return -1;
    if (!write_all(fd.get(), data, len)) {
        const int err = errno;
        fd.reset();
        errno = err;
        return -1;
    }
    return 0;
}

// MAPS as the kernel reads them, one "inside outside count" line each, into BUF. -1 with errno
// (E2BIG) when they do not fit.
ssize_t format_map(std::span<const IdMap> maps, char* buf, size_t size) {
    size_t used = 0;
    for (const IdMap& m : maps) {
        const int n = std::snprintf(buf + used, size - used, "%u %u %u\n", m.inside, m.outside, m.count);
        if (n < 0 || static_cast<size_t>(n) >= size - used) {
            errno = E2BIG;
            return -1;
        }
        used += static_cast<size_t>(n);
    }
    return static_cast<ssize_t>(used);
}

int write_map(const char* proc, const char* name, std::span<const IdMap> maps) {
    char text[512];
    const ssize_t len = format_map(maps, text, sizeof text);
    if (len < 0) return -1;
    return write_proc_file(proc, name, text, static_cast<size_t>(len));
}

}  // namespace

IdMapStep write_id_maps(const char* proc, Setgroups setgroups, std::span<const IdMap> uid, std::span<const IdMap> gid) {
    if (setgroups != Setgroups::Leave && write_proc_file(proc, "setgroups", "deny", 4) != 0 &&
        setgroups == Setgroups::Deny) {
        return IdMapStep::Setgroups;
    }
    if (write_map(proc, "uid_map", uid) != 0) return IdMapStep::UidMap;
    if (write_map(proc, "gid_map", gid) != 0) return IdMapStep::GidMap;
    return IdMapStep::Done;
}

void add_capabilities(CapSets& sets, std::span<const int> caps, bool inheritable) {
    for (int cap : caps) {
        const auto bit = 1U << (static_cast<unsigned>(cap) % 32);
        auto& word = sets[cap / 32];
        word.effective |= bit;
        word.permitted |= bit;
        if (inheritable) word.inheritable |= bit;
    }
}

int drop_bounding_set(uint64_t keep, int last) {
    for (int cap = 0; cap <= last; ++cap) {
        if (cap < 64 && ((keep >> cap) & 1U) != 0) continue;
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return -1;
    }
    return 0;
}

CapStep set_capabilities(const CapSets& sets, std::span<const int> ambient) {
    struct __user_cap_header_struct header {
        _LINUX_CAPABILITY_VERSION_3, 0
    };
    CapSets data{sets[0], sets[1]};  // capset takes them non-const
    if (::syscall(SYS_capset, &header, data) != 0) return CapStep::Capset;
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) return CapStep::AmbientClear;
    for (int cap : ambient) {
        if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0) return CapStep::AmbientRaise;
    }
    return CapStep::Done;
}

int load_seccomp_filter(std::span<const sock_filter> program) {
    sock_fprog prog{static_cast<unsigned short>(program.size()), const_cast<sock_filter*>(program.data())};
    return ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0 ? -1 : 0;
}

SetupRootStep enter_setup_root(const char* base, const char* tmpfs_data, unsigned long bind_flags) {
    if (::mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, tmpfs_data) != 0) return SetupRootStep::MountTmpfs;
    if (::chdir(base) != 0) return SetupRootStep::Chdir;
    if (::mkdir("newroot", 0755) != 0 || ::mkdir("oldroot", 0755) != 0) return SetupRootStep::MakeDirs;
    if (::mount("newroot", "newroot", nullptr, bind_flags, nullptr) != 0) return SetupRootStep::BindNewroot;
    if (::syscall(SYS_pivot_root, ".", "oldroot") != 0) return SetupRootStep::PivotRoot;
    return SetupRootStep::Done;
}

PivotStep pivot_into(const char* dir) {
    if (::chdir(dir) != 0) return PivotStep::Chdir;
    if (::syscall(SYS_pivot_root, ".", ".") != 0) return PivotStep::PivotRoot;
    if (::umount2(".", MNT_DETACH) != 0) return PivotStep::Detach;
    if (::chdir("/") != 0) return PivotStep::ChdirRoot;
    return PivotStep::Done;
}

}  // namespace cordon::kernel
