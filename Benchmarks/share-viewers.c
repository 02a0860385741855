// Benchmarks/share-viewers: many Server-Sent-Event viewers of fleet-share, for
// Benchmarks/share-cluster. Not part of the package: that script compiles it with `cc`
// (libnghttp2-dev and libssl-dev, which scripts/bootstrap installs for the package anyway).
//
//   share-viewers PORT STREAMS_PER_CONNECTION INTERVAL_MS < paths
//
// Reads one event-stream path per line from stdin (viewer K is line K, from 0), then opens
// the viewers against https://127.0.0.1:PORT as HTTP/2 streams over TLS (ALPN h2), as a
// browser with many tabs would: STREAMS_PER_CONNECTION streams per connection, a new
// connection every INTERVAL_MS, one thread per connection (blocking TLS), so that the viewers
// cost the machine little next to what they measure. The certificate is not checked (the
// benchmark's own, self-signed). Prints, one per line, as things happen:
//
//   E VIEWER LAT SECONDS      an event whose vehicle is at latitude LAT, read at SECONDS
//                              (CLOCK_REALTIME, when the bytes carrying it were read)
//   S VIEWER STATUS            a response status other than 200
//   X VIEWER REASON            a stream that ended ("ended", "reset"), or a connection that
//                              failed or closed (VIEWER is its first viewer)
//
// It runs until killed, and dies with its parent.

#define _GNU_SOURCE  // memmem
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int port;
static SSL_CTX *context;
static pthread_mutex_t output_lock = PTHREAD_MUTEX_INITIALIZER;

// One viewer: its stream's index and the bytes of an event not yet complete.
struct viewer {
  int index;
  const char *path;
  char *pending;
  size_t length, capacity;
};

// One connection's viewers, and the lines it has to print after the read in hand.
struct connection {
  struct viewer *viewers;
  int count;
  struct timespec read_at;
  char *out;
  size_t out_length, out_capacity;
};

static void append(struct connection *c, const char *format, ...) {
  char line[256];
  va_list arguments;
  va_start(arguments, format);
  int n = vsnprintf(line, sizeof line, format, arguments);
  va_end(arguments);
  if (n < 0) return;
  if ((size_t)n >= sizeof line) n = sizeof line - 1;
  if (c->out_length + n > c->out_capacity) {
    c->out_capacity = (c->out_length + n) * 2 + 4096;
    c->out = realloc(c->out, c->out_capacity);
  }
  memcpy(c->out + c->out_length, line, n);
  c->out_length += n;
}

// Prints the connection's lines in one piece under the lock, so lines never interleave.
static void flush_lines(struct connection *c) {
  if (c->out_length == 0) return;
  pthread_mutex_lock(&output_lock);
  size_t done = 0;
  while (done < c->out_length) {
    ssize_t n = write(STDOUT_FILENO, c->out + done, c->out_length - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) exit(0);  // the benchmark stopped reading: nothing left to do
    done += n;
  }
  pthread_mutex_unlock(&output_lock);
  c->out_length = 0;
}

// The vehicle's latitude in an event's JSON (`"vehicle":{..."lat":L...}`; keys come in no
// fixed order), or NULL.
static const char *latitude(const char *event, size_t length, size_t *digits) {
  const char *vehicle = memmem(event, length, "\"vehicle\":{", 11);
  if (!vehicle) return NULL;
  const char *end = memchr(vehicle, '}', event + length - vehicle);
  if (!end) return NULL;
  const char *lat = memmem(vehicle, end - vehicle, "\"lat\":", 6);
  if (!lat) return NULL;
  lat += 6;
  size_t n = 0;
  while (lat + n < end && (lat[n] == '-' || lat[n] == '.' || (lat[n] >= '0' && lat[n] <= '9'))) n++;
  *digits = n;
  return n ? lat : NULL;
}

static int on_data(nghttp2_session *session, uint8_t flags, int32_t stream, const uint8_t *data,
                   size_t length, void *user) {
  struct connection *c = user;
  struct viewer *v = nghttp2_session_get_stream_user_data(session, stream);
  if (!v) return 0;
  if (v->length + length > v->capacity) {
    v->capacity = (v->length + length) * 2;
    v->pending = realloc(v->pending, v->capacity);
  }
  memcpy(v->pending + v->length, data, length);
  v->length += length;
  // Every complete event ("\n\n"-terminated block) in the bytes so far.
  size_t start = 0;
  for (;;) {
    const char *mark = memmem(v->pending + start, v->length - start, "\n\n", 2);
    if (!mark) break;
    size_t block = mark - (v->pending + start);
    size_t digits;
    const char *lat = latitude(v->pending + start, block, &digits);
    if (lat)
      append(c, "E %d %.*s %ld.%09ld\n", v->index, (int)digits, lat, (long)c->read_at.tv_sec,
             c->read_at.tv_nsec);
    start += block + 2;
  }
  memmove(v->pending, v->pending + start, v->length - start);
  v->length -= start;
  return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                     size_t name_length, const uint8_t *value, size_t value_length, uint8_t flags,
                     void *user) {
  struct connection *c = user;
  if (frame->hd.type != NGHTTP2_HEADERS || name_length != 7 || memcmp(name, ":status", 7) != 0)
    return 0;
  struct viewer *v = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
  if (v && (value_length != 3 || memcmp(value, "200", 3) != 0))
    append(c, "S %d %.*s\n", v->index, (int)value_length, value);
  return 0;
}

static int on_close(nghttp2_session *session, int32_t stream, uint32_t code, void *user) {
  struct connection *c = user;
  struct viewer *v = nghttp2_session_get_stream_user_data(session, stream);
  if (v) append(c, "X %d %s\n", v->index, code == NGHTTP2_NO_ERROR ? "ended" : "reset");
  return 0;
}

static int send_all(SSL *ssl, nghttp2_session *session) {
  for (;;) {
    const uint8_t *bytes;
    ssize_t n = nghttp2_session_mem_send(session, &bytes);
    if (n < 0) return -1;
    if (n == 0) return 0;
    if (SSL_write(ssl, bytes, (int)n) <= 0) return -1;
  }
}

static void *run(void *argument) {
  struct connection *c = argument;
  int first = c->viewers[0].index;
  const char *failure = NULL;
  SSL *ssl = NULL;
  nghttp2_session *session = NULL;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
    failure = "connect";
    goto done;
  }
  ssl = SSL_new(context);
  SSL_set_fd(ssl, fd);
  if (SSL_connect(ssl) != 1) {
    failure = "tls";
    goto done;
  }
  const unsigned char *alpn;
  unsigned alpn_length;
  SSL_get0_alpn_selected(ssl, &alpn, &alpn_length);
  if (alpn_length != 2 || memcmp(alpn, "h2", 2) != 0) {
    failure = "no-h2";
    goto done;
  }
  nghttp2_session_callbacks *callbacks;
  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_close);
  nghttp2_session_client_new(&session, callbacks, c);
  nghttp2_session_callbacks_del(callbacks);
  // Large windows: the viewers read at once, so flow control never holds an event back.
  nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20}};
  nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings, 1);
  nghttp2_session_set_local_window_size(session, NGHTTP2_FLAG_NONE, 0, 1 << 30);
  char authority[32];
  snprintf(authority, sizeof authority, "127.0.0.1:%d", port);
  for (int i = 0; i < c->count; i++) {
    const char *path = c->viewers[i].path;
    nghttp2_nv headers[] = {
        {(uint8_t *)":method", (uint8_t *)"GET", 7, 3, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":scheme", (uint8_t *)"https", 7, 5, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":authority", (uint8_t *)authority, 10, strlen(authority), NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":path", (uint8_t *)path, 5, strlen(path), NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"accept", (uint8_t *)"text/event-stream", 6, 17, NGHTTP2_NV_FLAG_NONE},
    };
    if (nghttp2_submit_request(session, NULL, headers, 5, NULL, &c->viewers[i]) < 0) {
      failure = "submit";
      goto done;
    }
  }
  if (send_all(ssl, session) != 0) {
    failure = "write";
    goto done;
  }
  static __thread uint8_t buffer[1 << 16];
  for (;;) {
    int n = SSL_read(ssl, buffer, sizeof buffer);
    if (n <= 0) {
      failure = "closed";
      break;
    }
    clock_gettime(CLOCK_REALTIME, &c->read_at);
    if (nghttp2_session_mem_recv(session, buffer, n) < 0) {
      failure = "protocol";
      break;
    }
    if (send_all(ssl, session) != 0) {
      failure = "write";
      break;
    }
    flush_lines(c);
  }
done:
  if (failure) append(c, "X %d connection-%s\n", first, failure);
  flush_lines(c);
  if (session) nghttp2_session_del(session);
  if (ssl) SSL_free(ssl);
  if (fd >= 0) close(fd);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: share-viewers PORT STREAMS_PER_CONNECTION INTERVAL_MS < paths\n");
    return 2;
  }
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  signal(SIGPIPE, SIG_IGN);
  port = atoi(argv[1]);
  int per_connection = atoi(argv[2]);
  long interval_ms = atol(argv[3]);
  if (port <= 0 || per_connection <= 0 || interval_ms < 0) {
    fprintf(stderr, "share-viewers: bad arguments\n");
    return 2;
  }
  int count = 0, capacity = 1024;
  struct viewer *viewers = calloc(capacity, sizeof *viewers);
  char line[4096];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\r\n")] = 0;
    if (!*line) continue;
    if (count == capacity) viewers = realloc(viewers, (capacity *= 2) * sizeof *viewers);
    viewers[count] = (struct viewer){.index = count, .path = strdup(line)};
    count++;
  }
  context = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(context, SSL_VERIFY_NONE, NULL);  // the benchmark's self-signed certificate
  SSL_CTX_set_alpn_protos(context, (const unsigned char *)"\x02h2", 3);
  int connections = (count + per_connection - 1) / per_connection;
  pthread_t *threads = calloc(connections, sizeof *threads);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, 256 * 1024);
  for (int k = 0; k < connections; k++) {
    struct connection *c = calloc(1, sizeof *c);
    c->viewers = viewers + k * per_connection;
    c->count = count - k * per_connection < per_connection ? count - k * per_connection : per_connection;
    if (pthread_create(&threads[k], &attributes, run, c) != 0) {
      fprintf(stderr, "share-viewers: no thread for connection %d\n", k);
      return 1;
    }
    struct timespec pause = {interval_ms / 1000, (interval_ms % 1000) * 1000000};
    nanosleep(&pause, NULL);
  }
  for (int k = 0; k < connections; k++) pthread_join(threads[k], NULL);
  return 0;
}
