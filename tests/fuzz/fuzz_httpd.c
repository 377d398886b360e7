/* bedtop serve's request head parser (net/httpd.c): whatever a client
 * sends, at most BT_HTTPD_MAX_REQ bytes, must parse or be refused, and the
 * Accept negotiation and the conditional request's validators (If-None-Match,
 * an If-Modified-Since HTTP-date) must not crash on what it found. */
#include <string.h>

#include "net/httpd.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > BT_HTTPD_MAX_REQ)
        return 0;
    char head[BT_HTTPD_MAX_REQ + 1];
    memcpy(head, data, size);
    head[size] = '\0';
    struct bt_httpd_req req;
    int st = bt_httpd_parse(head, &req);
    if (st != 0 && st != 400 && st != 405 && st != 414)
        abort();
    if (st == 0 && (req.path[0] != '/' || strlen(req.path) >= sizeof req.path))
        abort();
    (void)bt_httpd_wants_openmetrics(req.accept);
    (void)bt_httpd_etag_matches(req.if_none_match, "\"0123456789abcdef-1-text\"");
    if (st == 0 && req.if_modified_since < -1)
        abort(); /* a date, or -1 */
    return 0;
}
