#define _GNU_SOURCE
#include "CGRPCSystem.h"

#include <pthread.h>
#include <signal.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

__thread const void *fleet_current_loop_storage = NULL;

int fleet_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int fleet_epoll_ctl(int epfd, int op, int fd, uint32_t events) {
  struct epoll_event event = {.events = events, .data = {.fd = fd}};
  return epoll_ctl(epfd, op, fd, &event);
}

int fleet_epoll_wait(int epfd, fleet_epoll_ready *out, int capacity, int timeout_ms) {
  struct epoll_event events[64];
  if (capacity > 64) capacity = 64;
  int count = epoll_wait(epfd, events, capacity, timeout_ms);
  for (int i = 0; i < count; i++) {
    out[i].fd = events[i].data.fd;
    out[i].events = events[i].events;
  }
  return count;
}

int fleet_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

int fleet_set_tcp_nodelay(int fd) {
  int one = 1;
  return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void fleet_set_thread_name(const char *name) { pthread_setname_np(pthread_self(), name); }

int fleet_accept_nonblocking(int fd, void *address, uint32_t *length) {
  socklen_t size = *length;
  int accepted = accept4(fd, (struct sockaddr *)address, &size, SOCK_NONBLOCK | SOCK_CLOEXEC);
  *length = size;
  return accepted;
}

void fleet_block_sigpipe_on_this_thread(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
}

long fleet_send_nosignal(int fd, const void *bytes, unsigned long count) {
  return send(fd, bytes, count, MSG_NOSIGNAL);
}
