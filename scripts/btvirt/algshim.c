/*
 * LD_PRELOAD shim that lets BlueZ's btvirt run on kernels without AF_ALG and keeps each run's
 * sockets in a private directory.
 *
 * btvirt asks the kernel crypto API (AF_ALG) for AES and CMAC when it creates a controller and
 * gives up when the socket cannot be made. Advertising and scanning never use that crypto, so
 * an AF_ALG socket is replaced by one end of a unix SEQPACKET pair, and bind/setsockopt/accept
 * on such sockets succeed without doing anything.
 *
 * btvirt always serves /tmp/bt-server-*. When BTVIRT_SOCKET_DIR is set, bind() and unlink()
 * of those paths are redirected into that directory, so that parallel test runs do not share
 * (or delete) each other's emulated air.
 *
 * Build: gcc -shared -fPIC -o algshim.so algshim.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif

#define MAX_FAKE_FDS 4096
static unsigned char fake_alg_fd[MAX_FAKE_FDS];

static const char server_prefix[] = "/tmp/bt-server-";

static int is_fake(int fd) { return fd >= 0 && fd < MAX_FAKE_FDS && fake_alg_fd[fd]; }

static int make_fake(void) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) return -1;
    /* The peer end is never read; keeping it open keeps the fake socket writable. */
    if (pair[0] < MAX_FAKE_FDS) fake_alg_fd[pair[0]] = 1;
    return pair[0];
}

/* Rewrites /tmp/bt-server-X to $BTVIRT_SOCKET_DIR/bt-server-X; returns 0 when not redirected. */
static int redirected_path(const char *path, char *out, size_t size) {
    const char *dir = getenv("BTVIRT_SOCKET_DIR");
    if (!dir || !*dir || strncmp(path, server_prefix, sizeof server_prefix - 1) != 0) return 0;
    int written = snprintf(out, size, "%s/%s", dir, path + strlen("/tmp/"));
    return written > 0 && (size_t)written < size;
}

int socket(int domain, int type, int protocol) {
    static int (*real)(int, int, int);
    if (!real) real = dlsym(RTLD_NEXT, "socket");
    if (domain == AF_ALG) return make_fake();
    return real(domain, type, protocol);
}

int bind(int fd, const struct sockaddr *addr, socklen_t len) {
    static int (*real)(int, const struct sockaddr *, socklen_t);
    if (!real) real = dlsym(RTLD_NEXT, "bind");
    if (is_fake(fd)) return 0;
    if (addr && addr->sa_family == AF_UNIX) {
        const struct sockaddr_un *unix_addr = (const struct sockaddr_un *)addr;
        struct sockaddr_un moved;
        memset(&moved, 0, sizeof moved);
        moved.sun_family = AF_UNIX;
        if (redirected_path(unix_addr->sun_path, moved.sun_path, sizeof moved.sun_path))
            return real(fd, (const struct sockaddr *)&moved, sizeof moved);
    }
    return real(fd, addr, len);
}

int unlink(const char *path) {
    static int (*real)(const char *);
    if (!real) real = dlsym(RTLD_NEXT, "unlink");
    char moved[sizeof(((struct sockaddr_un *)0)->sun_path)];
    if (redirected_path(path, moved, sizeof moved)) return real(moved);
    return real(path);
}

int setsockopt(int fd, int level, int name, const void *value, socklen_t len) {
    static int (*real)(int, int, int, const void *, socklen_t);
    if (!real) real = dlsym(RTLD_NEXT, "setsockopt");
    if (is_fake(fd)) return 0;
    return real(fd, level, name, value, len);
}

int accept(int fd, struct sockaddr *addr, socklen_t *len) {
    static int (*real)(int, struct sockaddr *, socklen_t *);
    if (!real) real = dlsym(RTLD_NEXT, "accept");
    if (is_fake(fd)) return make_fake();
    return real(fd, addr, len);
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    static int (*real)(int, struct sockaddr *, socklen_t *, int);
    if (!real) real = dlsym(RTLD_NEXT, "accept4");
    if (is_fake(fd)) return make_fake();
    return real(fd, addr, len, flags);
}

int close(int fd) {
    static int (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "close");
    if (fd >= 0 && fd < MAX_FAKE_FDS) fake_alg_fd[fd] = 0;
    return real(fd);
}
