/* A small HTTP/1.1 server on plain non-blocking sockets for `bedtop serve`,
 * driven by the one loop: every socket it owns sits in one epoll set whose fd
 * the loop waits on beside curl's sockets, so a scrape is answered while AWS
 * requests are in flight. Bounded: BT_HTTPD_MAX_CONN connections, requests of
 * at most BT_HTTPD_MAX_REQ bytes; a request head must arrive, and its answer
 * be read, within BT_HTTPD_IDLE_S seconds; HTTP/1.1 connections are kept
 * alive between scrapes for BT_HTTPD_KEEPALIVE_S. When all slots are taken a
 * new connection takes the longest-idle one's, so idle clients never starve a
 * scrape. Deadlines are the loop's: bt_httpd_next_ms is its wait, and
 * bt_httpd_expire closes what is due when the wait ends. */
#ifndef BEDTOP_HTTPD_H
#define BEDTOP_HTTPD_H
#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"

#define BT_HTTPD_MAX_CONN 64
#define BT_HTTPD_MAX_REQ 8192
#define BT_HTTPD_IDLE_S 10
#define BT_HTTPD_KEEPALIVE_S 120  /* longer than common scrape intervals (15 s to 1 min) */
#define BT_HTTPD_LINGER_S 2       /* after the answer: drain the client's input before close */
#define BT_HTTPD_DEFAULT_LISTEN "127.0.0.1:9464"

struct bt_httpd_req {
    char method[8];
    char path[256];             /* without the query string */
    char accept[512];
    bool gzip;                  /* Accept-Encoding allows gzip */
    bool keep_alive;            /* the connection persists after the answer */
};

struct bt_httpd_resp {
    int status;
    const char *content_type;
    struct bt_buf *body;        /* filled by the handler */
    const char *allow;          /* 405: the Allow header */
};

typedef void (*bt_httpd_handler)(void *arg, const struct bt_httpd_req *req,
                                 struct bt_httpd_resp *resp);

struct bt_httpd;
/* Parses ADDR:PORT ([V6]:PORT, :PORT or PORT: loopback) and listens. A
 * non-loopback address is accepted only when written as a numeric address
 * (0.0.0.0, a host's IP): a name that resolves off the host is refused.
 * NULL with err set on failure. */
struct bt_httpd *bt_httpd_new(const char *listen, bt_httpd_handler h, void *arg, char *err,
                              size_t errlen);
int bt_httpd_fd(const struct bt_httpd *s);         /* poll it for POLLIN */
const char *bt_httpd_address(const struct bt_httpd *s); /* "127.0.0.1:9464" as bound */
bool bt_httpd_loopback(const struct bt_httpd *s);
/* Accepts, reads, answers and closes whatever is ready; never blocks. */
void bt_httpd_run(struct bt_httpd *s);
/* Milliseconds until the next connection times out, -1: none; 0 only while
 * one is due and bt_httpd_expire has not run. */
int bt_httpd_next_ms(const struct bt_httpd *s);
/* Closes the connections whose deadline has passed; call when the loop's wait
 * ends, whether or not the epoll fd was ready. */
void bt_httpd_expire(struct bt_httpd *s);
void bt_httpd_free(struct bt_httpd *s);

/* Pure, for tests and the fuzzer: the request head (request line and header
 * lines, NUL-terminated) into req. 0, or the HTTP status to answer: 400 bad
 * request, 414 target too long, 405 not GET/HEAD (req still filled). */
int bt_httpd_parse(const char *head, struct bt_httpd_req *req);
/* Pure, for tests: which exposition the Accept header prefers (true:
 * OpenMetrics) and whether Accept-Encoding allows gzip. */
bool bt_httpd_wants_openmetrics(const char *accept);
bool bt_httpd_accepts_gzip(const char *accept_encoding);
/* gzip (RFC 1952) of in; false on a zlib failure. */
bool bt_gzip(const char *in, size_t len, struct bt_buf *out);
#endif
