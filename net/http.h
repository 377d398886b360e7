/* The HTTP layer: one libcurl multi handle driven from the main loop, AWS
 * SDK "standard" retries (backoff timers inside the poll, a shared retry
 * budget), SigV4 re-signing per attempt, clock-skew correction per host and
 * credential refresh. Collectors submit requests and get one callback each. */
#ifndef BEDTOP_HTTP_H
#define BEDTOP_HTTP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bt_buf;
#include "aws/sigv4.h"   /* struct bt_creds, struct bt_header, bt_sigv4_sign */

#define BT_HTTP_MAX_BODY (64u * 1024u * 1024u) /* default response body bound */
#define BT_HTTP_RETRY_TOKENS 500               /* standard-mode retry budget */

struct bt_http;

/* Credentials shared by requests of one profile; refreshed by http.c when missing, within 5 minutes of
 * expiry, or after ExpiredToken/ExpiredTokenException (then the request is retried once).
 * A refresh never blocks the loop: refresh() either finishes at once (0: creds set, -1: err) or
 * starts work inside this bt_http (1: STS/SSO requests, a credential_process child) and later calls
 * bt_creds_provider_done() from one of this bt_http's callbacks. Requests that need credentials wait
 * (without a timer) until it is done; requests whose old credentials are still valid use them. */
struct bt_creds_provider {
    struct bt_creds creds;
    bool valid;
    int (*refresh)(struct bt_creds_provider *p, struct bt_http *h, char *err, size_t errlen);
    void *arg;                    /* for refresh (e.g. profile options) */
    char error[1024];             /* last refresh failure, shown to the user (whole) */
    bool pending;                 /* a refresh is running */
    unsigned gen;                 /* refreshes finished so far */
    int64_t next_try;             /* epoch s: no early (advisory) refresh before this after a failure */
};
/* Ends a pending refresh: c != NULL replaces the creds, else err (one line) is kept. */
void bt_creds_provider_done(struct bt_creds_provider *p, const struct bt_creds *c, const char *err);

struct bt_http_req {
    const char *method;           /* "POST", "GET", "PUT" */
    const char *url;              /* full URL: https://monitoring.us-east-1.amazonaws.com/ or http://127.0.0.1:PORT/ */
    const char *service;          /* SigV4 service ("monitoring", "servicequotas"); NULL: unsigned */
    const char *region;
    struct bt_creds_provider *creds; /* NULL: unsigned */
    const char *target;           /* X-Amz-Target or NULL */
    const char *content_type;     /* or NULL */
    const char *body; size_t body_len; /* copied */
    const struct bt_header *headers; size_t nheaders; /* extra headers, copied */
    double timeout;               /* seconds per attempt (0: 10 s) */
    int max_attempts;             /* 0: 3 (AWS SDK standard mode) */
    const char *label;            /* for --verbose and errors, e.g. "cloudwatch us-east-1 GetMetricData" */
};

struct bt_http_resp {
    long status;                  /* HTTP status, 0 on transport failure */
    const char *body; size_t body_len;   /* valid during the callback only; never NULL ("" when none) */
    char content_type[128];
    char error_code[128];         /* from JSON __type (namespace# and :suffix stripped) or x-amzn-query-error header (before ';') */
    char error_message[256];      /* "message"/"Message" of the error body */
    char transport_error[1024];    /* curl's error text, "" if none; also "invalid URL ...",
                                   * "credentials: ..." and "response body exceeds N bytes" */
    int attempts;                 /* total attempts made */
    int64_t server_date;          /* Date header (epoch s), 0 if absent */
    double elapsed;               /* seconds, all attempts */
    const char *url;              /* the URL requested */
};
typedef void (*bt_http_cb)(void *arg, const struct bt_http_resp *resp);

struct bt_http_stats {
    unsigned long requests, attempts, retries, retries_denied_by_budget, throttled, bytes_in, bytes_out;
    long retry_tokens;            /* what is left of the retry budget (BT_HTTP_RETRY_TOKENS at start) */
};

struct bt_http *bt_http_new(int verbose);  /* verbose: log each attempt to stderr: method, url, target, status, ms — never headers with secrets */
/* Queues a request; the callback runs exactly once from bt_http_poll (success, final failure or
 * retries exhausted); a bad URL or method also arrives there, as a transport_error.
 * Returns -1 (and never calls back) only when h, req, req->url or cb is NULL. Callbacks may submit. */
int bt_http_submit(struct bt_http *h, const struct bt_http_req *req, bt_http_cb cb, void *arg);
/* Waits up to timeout_ms on the transfers' sockets, the retry timers and extra_fd (-1: none) with
 * curl_multi_poll, performs transfers, runs callbacks. *extra_ready set when extra_fd became readable.
 * Returns the number of callbacks run, or -1 when curl's poll failed. */
int bt_http_poll(struct bt_http *h, int timeout_ms, int extra_fd, bool *extra_ready);
int bt_http_pending(const struct bt_http *h);   /* requests not yet called back */
const struct bt_http_stats *bt_http_get_stats(const struct bt_http *h);
void bt_http_wakeup(struct bt_http *h);          /* curl_multi_wakeup (not from a signal handler) */
void bt_http_free(struct bt_http *h);           /* cancels pending requests without callbacks */
/* Drops the pending requests submitted with (cb, arg) without calling back. */
void bt_http_cancel(struct bt_http *h, bt_http_cb cb, void *arg);
int bt_http_verbose(const struct bt_http *h);

/* Extra file descriptors watched inside the same curl_multi_poll (a credential_process child's
 * pipes, the loop's signal self-pipe): cb runs from bt_http_poll when fd is readable (or hung up),
 * or with timed_out once deadline_ms (bt_http_mono_ms() clock; 0: none) has passed. fd -1 is a
 * plain timer. A watch stays until bt_http_unwatch (cb may call it). Returns -1 when full. */
typedef void (*bt_http_watch_cb)(void *arg, int fd, bool timed_out);
int bt_http_watch(struct bt_http *h, int fd, int64_t deadline_ms, bt_http_watch_cb cb, void *arg);
void bt_http_unwatch(struct bt_http *h, int fd, void *arg);
int64_t bt_http_mono_ms(void);

/* Backoff: delay before retry i (1, 2, ...) = uniform(0, min(max_s, base_s * 2^(i-1))).
 * Defaults are the SDKs' standard mode: base 1 s, max 20 s. Tests shorten them. */
void bt_http_set_backoff(struct bt_http *h, double base_s, double max_s);
/* Response body bound (default BT_HTTP_MAX_BODY); larger answers fail the request. */
void bt_http_set_max_body(struct bt_http *h, size_t max_bytes);

/* Pure: the AWS error code and message of an error answer. The x-amzn-query-error header
 * (NULL if absent) wins over the body's __type/code/Code (JSON) or <Code> (XML), because
 * awsQueryCompatible services (CloudWatch) put the documented code there. Codes are
 * normalised: "ns#Code:http://..." -> "Code". Returns 0 when a code was found, else -1
 * (code ""); msg gets "message"/"Message" (control characters replaced) or "". */
int bt_http_error_code(const char *body, size_t len, const char *query_error_header,
                       char *code, size_t codelen, char *msg, size_t msglen);
/* Appends s percent-encoded for a URL query (RFC 3986 unreserved characters kept). */
void bt_http_url_escape(struct bt_buf *b, const char *s);
/* Standard-mode classification of an error code (true for the throttling list). */
bool bt_http_is_throttle_code(const char *code);
#endif
