// OpenSSL 3 from libssl-dev: TLS with ALPN for GRPCWire; PEM keys and RS256 signatures for
// FleetConsumer's service-account tokens; HMAC, AES-CTR and random bytes for share links.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>

// Macros Swift cannot import, as functions.

static inline int fleet_ssl_ctx_set_min_tls12(SSL_CTX *ctx) {
  return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

/// Partial writes, and a write buffer that may move between retries (ours is a Swift array).
static inline void fleet_ssl_ctx_set_write_modes(SSL_CTX *ctx) {
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

static inline int fleet_ssl_set_sni(SSL *ssl, const char *name) {
  return (int)SSL_set_tlsext_host_name(ssl, name);
}

// A server selects HTTP/2 through ALPN, or refuses the handshake.
static int fleet_alpn_select_h2(
    SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
    unsigned int inlen, void *arg) {
  (void)ssl;
  (void)arg;
  static const unsigned char h2[] = {2, 'h', '2'};
  if (SSL_select_next_proto((unsigned char **)out, outlen, h2, sizeof h2, in, inlen) ==
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_OK;
  }
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

static inline void fleet_ssl_ctx_select_h2(SSL_CTX *ctx) {
  SSL_CTX_set_alpn_select_cb(ctx, fleet_alpn_select_h2, NULL);
}

// A BIO whose reads and writes go to a Swift byte transport (TLS inside the TLS to an
// https:// proxy): the retry flags a non-blocking source sets, as functions.
static inline void fleet_bio_set_retry(BIO *bio, int write) {
  BIO_set_flags(bio, (write ? BIO_FLAGS_WRITE : BIO_FLAGS_READ) | BIO_FLAGS_SHOULD_RETRY);
}

static inline void fleet_bio_clear_retry(BIO *bio) {
  BIO_clear_flags(bio, BIO_FLAGS_RWS | BIO_FLAGS_SHOULD_RETRY);
}
