#ifndef C_GRPC_SYSTEM_H
#define C_GRPC_SYSTEM_H
// The Linux calls GRPCWire's event loop needs that Swift's Glibc module does not expose.
// epoll_event is a packed struct on x86-64, which Swift does not import faithfully, so the
// loop goes through these unpacked wrappers instead.
#include <stdint.h>

enum {
  FLEET_EPOLL_IN = 0x001,
  FLEET_EPOLL_OUT = 0x004,
  FLEET_EPOLL_ERR = 0x008,
  FLEET_EPOLL_HUP = 0x010,
  FLEET_EPOLL_RDHUP = 0x2000,
};

/// One ready descriptor, as epoll_wait reported it.
typedef struct {
  int32_t fd;
  uint32_t events;
} fleet_epoll_ready;

int fleet_epoll_create(void);
/// op: 1 add, 2 delete, 3 modify (EPOLL_CTL_*). Returns 0 or -1 with errno.
int fleet_epoll_ctl(int epfd, int op, int fd, uint32_t events);
/// Like epoll_wait, into at most `capacity` entries of `out`.
int fleet_epoll_wait(int epfd, fleet_epoll_ready *out, int capacity, int timeout_ms);
/// A non-blocking, close-on-exec eventfd.
int fleet_eventfd(void);
/// Sets TCP_NODELAY on a TCP socket. Returns 0 or -1 with errno.
int fleet_set_tcp_nodelay(int fd);

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC (Glibc's module does not expose accept4).
int fleet_accept_nonblocking(int fd, void *address, uint32_t *length);

/// Blocks SIGPIPE for the calling thread: a write to a socket the peer has reset (ours, or one
/// OpenSSL makes for an alert) then fails with EPIPE instead of killing the process. The
/// process's own signal handling is left alone.
void fleet_block_sigpipe_on_this_thread(void);

/// send(2) with MSG_NOSIGNAL.
long fleet_send_nosignal(int fd, const void *bytes, unsigned long count);

/// Names the calling thread (at most 15 bytes are kept), for debuggers and top.
void fleet_set_thread_name(const char *name);

/// The event loop whose thread this is, as an opaque pointer, or NULL on any other thread.
/// The loop's thread sets it once before it runs, so "am I on loop X?" is one thread-local
/// load and a compare, cheap enough to check at every loop-only entry point in every build.
extern __thread const void *fleet_current_loop_storage;
static inline const void *fleet_current_loop(void) { return fleet_current_loop_storage; }
static inline void fleet_set_current_loop(const void *loop) { fleet_current_loop_storage = loop; }

#endif
