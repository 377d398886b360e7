/* bedtop serve's request head parser (net/httpd.c): whatever a client
 * sends, at most BT_HTTPD_MAX_REQ bytes, must parse or be refused, and the
 * Accept negotiation must not crash on what it found. */
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
    return 0;
}
