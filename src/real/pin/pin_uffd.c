/*
 * pin_uffd.c - on-first-touch pinning through userfaultfd (contract in
 * pin.h): the region is registered for missing-page faults; a thread of the
 * library reads the faults, and for the first fault of a block fills the
 * whole block with zeroed pages (UFFDIO_COPY from a zero buffer, without
 * waking), locks it and records it in the map cache (pin__lock_block, with
 * eviction), then wakes the faulting thread (UFFDIO_WAKE).  So the access
 * that faulted continues only once its block is pinned: a DMA behind a pin
 * waits for it, as in PVDMA.
 *
 * Bounds: the thread polls with a 100 ms timeout and ends when
 * pin_map_fini writes to its stop pipe; a page faults at most once (a
 * filled page stays present; eviction only unlocks), so after as many
 * faults as the region has pages the thread unregisters the region (later
 * accesses fault normally) and ends.  A fill retries EAGAIN at most 64
 * times per page.  Every descriptor, the thread and the zero buffer are
 * released by pin__uffd_stop, which pin_map_fini calls first.
 */
#include "real/pin/pin_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1   /* linux/userfaultfd.h of 5.11; older headers lack it */
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)     /* /dev/userfaultfd, 6.1 */
#endif

struct pin_uffd {
    int fd;                     /* the userfaultfd */
    int stop[2];                /* pipe: pin__uffd_stop writes, the thread polls */
    pthread_t thread;
    bool running;               /* thread started and not joined */
    pthread_mutex_t mu;         /* guards the map cache (pin__lock) */
    void *zero;                 /* block_bytes of zeroes, the fill's source */
    uint64_t fault_budget;      /* faults left before the thread gives up */
    int err_code;               /* first error of the thread, 0 if none */
    char err_msg[sizeof(((err *)0)->msg)];
};

void pin__lock(pin_map *m)
{
    if (m->uffd)
        pthread_mutex_lock(&m->uffd->mu);
}

void pin__unlock(pin_map *m)
{
    if (m->uffd)
        pthread_mutex_unlock(&m->uffd->mu);
}

static int read_sysctl(const char *path)
{
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* Opens a userfaultfd and does the API handshake: the descriptor, or -1
 * with the reason in why. */
static int uffd_open(char *why, size_t n)
{
    int flags = O_CLOEXEC | O_NONBLOCK;
    int fd = (int)syscall(SYS_userfaultfd, flags | UFFD_USER_MODE_ONLY);
    int e1 = fd < 0 ? errno : 0;
    if (fd < 0 && e1 == EINVAL)         /* a kernel before 5.11: no user-mode-only flag */
        fd = (int)syscall(SYS_userfaultfd, flags);
    int e2 = fd < 0 ? errno : 0;
    if (fd < 0 && e1 != ENOSYS) {       /* /dev/userfaultfd (6.1) needs no capability */
        int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
        if (dev >= 0) {
            fd = ioctl(dev, USERFAULTFD_IOC_NEW, flags | UFFD_USER_MODE_ONLY);
            close(dev);
        }
    }
    if (fd < 0) {
        if (e1 == ENOSYS)
            snprintf(why, n, "the kernel has no userfaultfd system call (ENOSYS: built "
                             "without CONFIG_USERFAULTFD, or a seccomp filter refuses it)");
        else if (e2 == EPERM || e1 == EPERM)
            snprintf(why, n, "userfaultfd refused (EPERM): vm.unprivileged_userfaultfd is %d, "
                             "the process %s CAP_SYS_PTRACE, and /dev/userfaultfd is not "
                             "usable; set the sysctl to 1, grant the capability, or allow "
                             "access to /dev/userfaultfd",
                     read_sysctl("/proc/sys/vm/unprivileged_userfaultfd"),
                     pin__has_cap(19) ? "has" : "lacks");
        else
            snprintf(why, n, "userfaultfd failed: %s", strerror(e2 ? e2 : e1));
        return -1;
    }
    struct uffdio_api api = {.api = UFFD_API, .features = 0};
    if (ioctl(fd, UFFDIO_API, &api) != 0) {
        snprintf(why, n, "UFFDIO_API handshake failed: %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int pin_uffd_probe(char *why, size_t n)
{
    int fd = uffd_open(why, n);
    if (fd < 0)
        return AISIM_EIO;
    close(fd);
    snprintf(why, n, "available");
    return 0;
}

int pin__uffd_fill(pin_map *m, size_t i, err *e)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)(m->base + i * m->block_bytes);
    size_t off = 0, tries = 0, limit = 64 * (m->block_bytes / page);
    while (off < m->block_bytes) {
        if (++tries > limit)
            return ERR(e, AISIM_EIO, "userfaultfd fill of block %zu: no progress after %zu "
                                     "tries", i, limit);
        struct uffdio_copy c = {.dst = start + off, .src = (uintptr_t)m->uffd->zero,
                                .len = m->block_bytes - off, .mode = UFFDIO_COPY_MODE_DONTWAKE};
        if (ioctl(m->uffd->fd, UFFDIO_COPY, &c) == 0) {
            off += (size_t)c.copy;
            continue;
        }
        if (c.copy > 0)
            off += (size_t)c.copy;              /* partial copy */
        else if (errno == EEXIST)
            off += page;                        /* a page already there is kept */
        else if (errno != EAGAIN)
            return ERR(e, AISIM_EIO, "userfaultfd fill of block %zu: %s", i, strerror(errno));
    }
    m->state[i] |= PIN_B_PRESENT;
    return 0;
}

/* One fault at addr: pin its block (fill, lock, record) unless it is pinned
 * already, then wake the block's faulting threads. */
static void handle_fault(pin_map *m, uintptr_t addr)
{
    struct pin_uffd *u = m->uffd;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t i = (size_t)(addr - (uintptr_t)m->base) / m->block_bytes;
    err e = {0};
    pthread_mutex_lock(&u->mu);
    m->stat_faults++;
    int r = 0;
    if (i >= m->nblocks)
        r = ERR(&e, AISIM_ERANGE, "userfaultfd fault at %#lx outside the region",
                (unsigned long)addr);
    else if (!(m->state[i] & PIN_B_LOCKED))
        r = pin__lock_block(m, i, &e);
    if (r && i < m->nblocks && !(m->state[i] & PIN_B_PRESENT)) {
        /* not pinned (the limit, a failed fill): the access must still go on */
        struct uffdio_copy c = {.dst = addr & ~(uintptr_t)(page - 1),
                                .src = (uintptr_t)u->zero, .len = page,
                                .mode = UFFDIO_COPY_MODE_DONTWAKE};
        (void)ioctl(u->fd, UFFDIO_COPY, &c);
    }
    if (r && !u->err_code) {
        u->err_code = r;
        snprintf(u->err_msg, sizeof u->err_msg, "%s", e.msg);
    }
    pthread_mutex_unlock(&u->mu);
    struct uffdio_range w = {.start = (uintptr_t)m->base + i * m->block_bytes,
                             .len = m->block_bytes};
    if (i >= m->nblocks)
        w = (struct uffdio_range){.start = addr & ~(uintptr_t)(page - 1), .len = page};
    (void)ioctl(u->fd, UFFDIO_WAKE, &w);
}

static void *fault_thread(void *arg)
{
    pin_map *m = arg;
    struct pin_uffd *u = m->uffd;
    for (;;) {
        struct pollfd p[2] = {{.fd = u->fd, .events = POLLIN}, {.fd = u->stop[0], .events = POLLIN}};
        int r = poll(p, 2, 100);
        if (r < 0 && errno != EINTR)
            break;
        if (p[1].revents)
            break;                              /* pin_map_fini */
        if (r <= 0 || !(p[0].revents & POLLIN))
            continue;                           /* idle: 100 ms until the next look */
        struct uffd_msg msg;
        ssize_t n = read(u->fd, &msg, sizeof msg);
        if (n != (ssize_t)sizeof msg || msg.event != UFFD_EVENT_PAGEFAULT)
            continue;
        if (u->fault_budget == 0) {
            /* more faults than pages: hand the region back to the kernel */
            struct uffdio_range all = {.start = (uintptr_t)m->base, .len = m->len};
            (void)ioctl(u->fd, UFFDIO_UNREGISTER, &all);
            (void)ioctl(u->fd, UFFDIO_WAKE, &all);
            break;
        }
        u->fault_budget--;
        handle_fault(m, (uintptr_t)msg.arg.pagefault.address);
    }
    return NULL;
}

void pin__uffd_stop(pin_map *m)
{
    struct pin_uffd *u = m->uffd;
    if (!u)
        return;
    if (u->running) {
        (void)!write(u->stop[1], "x", 1);
        pthread_join(u->thread, NULL);
    }
    struct uffdio_range all = {.start = (uintptr_t)m->base, .len = m->len};
    (void)ioctl(u->fd, UFFDIO_UNREGISTER, &all);
    close(u->fd);
    close(u->stop[0]);
    close(u->stop[1]);
    if (u->zero)
        munmap(u->zero, m->block_bytes);
    pthread_mutex_destroy(&u->mu);
    free(u);
    m->uffd = NULL;
}

int pin_map_create_uffd(pin_map *m, size_t len, size_t block_bytes, err *e)
{
    char why[400];
    int fd = uffd_open(why, sizeof why);
    if (fd < 0) {
        memset(m, 0, sizeof *m);
        return ERR(e, AISIM_EIO, "userfaultfd unavailable: %s", why);
    }
    int r = pin_map_create(m, len, block_bytes, false, false, e);
    if (r) {
        close(fd);
        return r;
    }
    struct pin_uffd *u = xcalloc(1, sizeof *u);
    u->fd = fd;
    u->stop[0] = u->stop[1] = -1;
    pthread_mutex_init(&u->mu, NULL);
    m->uffd = u;
    u->fault_budget = m->len / (size_t)sysconf(_SC_PAGESIZE) + 1;
    u->zero = mmap(NULL, block_bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct uffdio_register reg = {.range = {.start = (uintptr_t)m->base, .len = m->len},
                                  .mode = UFFDIO_REGISTER_MODE_MISSING};
    if (u->zero == MAP_FAILED) {
        u->zero = NULL;
        r = ERR(e, AISIM_EIO, "mmap of the %zu-byte zero block: %s", block_bytes,
                strerror(errno));
    } else if (pipe(u->stop) != 0 || fcntl(u->stop[0], F_SETFD, FD_CLOEXEC) != 0 ||
               fcntl(u->stop[1], F_SETFD, FD_CLOEXEC) != 0) {
        r = ERR(e, AISIM_EIO, "pipe: %s", strerror(errno));
    } else if (ioctl(fd, UFFDIO_REGISTER, &reg) != 0) {
        r = ERR(e, AISIM_EIO, "userfaultfd unavailable: UFFDIO_REGISTER of %zu bytes: %s",
                m->len, strerror(errno));
    } else if (!(reg.ioctls & ((uint64_t)1 << _UFFDIO_COPY))) {
        r = ERR(e, AISIM_EIO, "userfaultfd unavailable: the kernel offers no UFFDIO_COPY "
                              "on anonymous memory");
    } else if ((errno = pthread_create(&u->thread, NULL, fault_thread, m)) != 0) {
        r = ERR(e, AISIM_EIO, "userfaultfd fault thread: %s", strerror(errno));
    } else {
        u->running = true;
        return 0;
    }
    pin_map_fini(m);
    return r;
}

int pin_uffd_error(pin_map *m, err *e)
{
    if (!m->uffd)
        return 0;
    pthread_mutex_lock(&m->uffd->mu);
    int r = m->uffd->err_code;
    if (r)
        ERR(e, r, "%s", m->uffd->err_msg);
    pthread_mutex_unlock(&m->uffd->mu);
    return r;
}
