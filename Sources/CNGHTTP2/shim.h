// nghttp2 1.52 from libnghttp2-dev. Use mem_recv/mem_send/submit_request, not the "2" names.
#include <nghttp2/nghttp2.h>
