/* A small HTTP/1.1 server on plain non-blocking sockets for `bedtop serve`,
 * driven by the one loop: every socket it owns sits in one epoll set whose fd
 * the loop waits on beside curl's sockets, so a scrape is answered while AWS
 * requests are in flight. Bounded: BT_HTTPD_MAX_CONN connections, requests of
 * at most BT_HTTPD_MAX_REQ bytes; every connection has a deadline, writing ones
 * included: a request head must arrive, and its answer be read, within
 * BT_HTTPD_IDLE_S seconds; HTTP/1.1 connections are kept alive between scrapes
 * for BT_HTTPD_KEEPALIVE_S. When all slots are taken a new connection takes
 * the slot of the one that has gone longest without moving (the longest idle,
 * the oldest unfinished head, or the writer whose client has read nothing for
 * longest), so neither idle clients nor clients that pipeline and never read
 * starve a scrape: a new connection always gets a slot. A request whose head
 * holds a NUL byte, a malformed header line or ambiguous framing (a
 * Content-Length that is not one number, Content-Length with Transfer-Encoding)
 * is answered 400 and closed at once. Deadlines are the loop's: bt_httpd_next_ms
 * is its wait, and bt_httpd_expire closes what is due when the wait ends. */
#ifndef BEDTOP_HTTPD_H
#define BEDTOP_HTTPD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util.h"

#define BT_HTTPD_MAX_CONN 64
#define BT_HTTPD_MAX_REQ 8192
#define BT_HTTPD_IDLE_S 10
#define BT_HTTPD_KEEPALIVE_S 120  /* longer than common scrape intervals (15 s to 1 min) */
#define BT_HTTPD_LINGER_S 2       /* after the answer: drain the client's input before close */
#define BT_HTTPD_SNDBUF (256 * 1024) /* a connection's kernel send buffer (SO_SNDBUF) */
#define BT_HTTPD_DEFAULT_LISTEN "127.0.0.1:9464"

struct bt_httpd_req {
    char method[8];
    char path[256];             /* without the query string */
    char accept[512];
    bool gzip;                  /* Accept-Encoding allows gzip */
    bool keep_alive;            /* the connection persists after the answer */
    char if_none_match[512];    /* the If-None-Match header as sent, "" none */
    int64_t if_modified_since;  /* If-Modified-Since in Unix seconds, -1 none or not a date */
};

/* A response body shared by the handler and the connections sending it:
 * immutable once made and freed when its last holder lets go, so a body built
 * once (one evaluation's exposition, plain or gzipped) is sent to every
 * scrape with no copy, and a slow client keeps the one it asked for while
 * the next is built. */
struct bt_httpd_body;
/* Takes b's bytes (b is left empty); one reference, the caller's. */
struct bt_httpd_body *bt_httpd_body_take(struct bt_buf *b);
void bt_httpd_body_unref(struct bt_httpd_body *b); /* NULL: nothing */
size_t bt_httpd_body_len(const struct bt_httpd_body *b);
const char *bt_httpd_body_data(const struct bt_httpd_body *b);

struct bt_httpd_resp {
    int status;
    const char *content_type;
    struct bt_buf *body;        /* filled by the handler (gzipped per request when asked) */
    /* or a shared body, sent as it is (the server takes its own reference) */
    struct bt_httpd_body *shared;
    bool shared_gzip;           /* shared is gzip-encoded: Content-Encoding: gzip */
    const char *vary;           /* the Vary header, NULL none */
    const char *allow;          /* 405: the Allow header */
    /* validators of a 200 (RFC 9110 8.8): a conditional GET or HEAD whose
     * If-None-Match lists etag (or, with no If-None-Match, whose
     * If-Modified-Since is at or after last_modified) is answered 304 */
    char etag[64];              /* strong entity tag with its quotes, "" none */
    int64_t last_modified;      /* Unix seconds, 0 none */
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
 * request (a malformed request line or header line, or framing that is not one
 * Content-Length), 414 target too long, 405 not GET/HEAD (req still filled). */
int bt_httpd_parse(const char *head, struct bt_httpd_req *req);
/* Pure, for tests: which exposition the Accept header prefers (true:
 * OpenMetrics) and whether Accept-Encoding allows gzip. */
bool bt_httpd_wants_openmetrics(const char *accept);
bool bt_httpd_accepts_gzip(const char *accept_encoding);
/* Pure, for tests: an HTTP-date (IMF-fixdate, or the obsolete RFC 850 and
 * asctime forms a recipient must accept) in Unix seconds, -1 if it is none. */
int64_t bt_httpd_parse_date(const char *s);
/* Unix seconds as an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), n >= 30. */
void bt_httpd_fmt_date(int64_t t, char *out, size_t n);
/* Pure, for tests: whether an If-None-Match value matches strong entity tag
 * etag ("*", or a list holding it; the weak comparison RFC 9110 13.1.2 asks). */
bool bt_httpd_etag_matches(const char *if_none_match, const char *etag);
/* gzip (RFC 1952) of in; false on a zlib failure. */
bool bt_gzip(const char *in, size_t len, struct bt_buf *out);
/* The same made piece by piece, for a body that is never held whole: bt_gzip_new,
 * then bt_gzip_write of each piece in order, then bt_gzip_end (which frees z) appends
 * what is left; every call appends its output to out. NULL or false: a zlib failure
 * (out then holds no usable gzip; bt_gzip_end still frees z). */
struct bt_gzip;
struct bt_gzip *bt_gzip_new(void);
bool bt_gzip_write(struct bt_gzip *z, const char *in, size_t len, struct bt_buf *out);
bool bt_gzip_end(struct bt_gzip *z, struct bt_buf *out);
/* The bytes of a gzip member made by bt_gzip (the plain body of a kept gzip),
 * appended to out; false when in is not a whole gzip member. */
bool bt_gunzip(const char *in, size_t len, struct bt_buf *out);
#endif
