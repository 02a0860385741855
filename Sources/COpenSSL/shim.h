// OpenSSL 3 from libssl-dev: TLS with ALPN for GRPCWire.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
