/* The HTTP client: one libcurl multi handle driven from the main loop, retries with
 * backoff timers inside the poll and a shared retry budget (the AWS SDKs' standard mode),
 * and watched descriptors and timers for the rest of the loop. What a request's answers
 * mean (signing each attempt, error codes, which errors retry, clock skew, credential
 * refresh) is its policy's business: aws/policy.h is the AWS one. Collectors submit
 * requests and get one callback each. */
#ifndef BEDTOP_HTTP_H
#define BEDTOP_HTTP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "net/header.h"   /* struct bt_header */

struct bt_buf;

#define BT_HTTP_MAX_BODY (64u * 1024u * 1024u) /* default response body bound */
#define BT_HTTP_RETRY_TOKENS 500               /* standard-mode retry budget */

struct bt_http;
struct bt_creds_provider;     /* a policy's credentials (aws/policy.h); opaque here */

/* One attempt's message as sent, for the policy to sign. */
struct bt_http_msg {
    const char *method, *path, *query;        /* query raw, without '?', may be NULL */
    const struct bt_header *headers;          /* as sent, Host first */
    size_t nheaders;
    const char *body; size_t body_len;
    const char *host;                         /* the Host header's value */
    const char *service, *region;             /* the request's signing scope */
};
/* One error answer (status >= 300), for the policy to read. */
struct bt_http_answer {
    long status;
    const char *body; size_t body_len;
    const char *error_header;                 /* x-amzn-query-error, else x-amzn-ErrorType, else NULL */
    int64_t server_date;                      /* Date header (epoch s), 0 if absent */
    const char *host;
};
enum bt_http_next {
    BT_HTTP_FINAL,          /* deliver the answer (unless its status alone retries: 429, 5xx) */
    BT_HTTP_RETRY,          /* a failure worth retrying: backoff, costs retry budget */
    BT_HTTP_RETRY_NOW,      /* a correction (clock, credentials): again at once, free */
};
/* What a request's answers mean. Every hook runs from bt_http_poll. */
struct bt_http_policy {
    /* Before each attempt of a request with credentials: 1 sign and send it, 0 wait (a
     * refresh is running: the request sleeps without a timer; *gen is the policy's note of
     * which refresh, waited says a wait ended), -1 fail with one line in fail. */
    int (*ready)(struct bt_creds_provider *p, struct bt_http *h, bool waited, unsigned *gen,
                 char *fail, size_t n);
    /* Signs one attempt: add() appends each header it needs. false with fail set. */
    bool (*sign)(struct bt_creds_provider *p, const struct bt_http_msg *m,
                 void (*add)(void *ctx, const char *name, const char *value), void *ctx,
                 char *fail, size_t n);
    /* The error code and message of an answer (for the callback), "" when none, and what
     * kind of failure it is. */
    enum bt_errkind (*describe)(const struct bt_http_answer *a, char *code, size_t codelen, char *msg,
                                size_t msglen);
    /* What an error answer means for the request; fixes is the request's own scratch word
     * (0 at submit) so a correction is tried once; *throttled counts it in the stats. */
    enum bt_http_next (*judge)(struct bt_creds_provider *p, const struct bt_http_answer *a, const char *code,
                               const char *msg, unsigned *fixes, bool *throttled);
};

struct bt_http_req {
    const char *method;           /* "POST", "GET", "PUT" */
    const char *url;              /* full URL: https://monitoring.us-east-1.amazonaws.com/ or http://127.0.0.1:PORT/ */
    const struct bt_http_policy *policy; /* NULL: plain HTTP (only 429, 5xx and transport errors retry) */
    const char *service;          /* signing scope ("monitoring", "servicequotas"); NULL: unsigned */
    const char *region;
    struct bt_creds_provider *creds; /* the policy's credentials; NULL: unsigned */
    const char *target;           /* X-Amz-Target or NULL */
    const char *content_type;     /* or NULL */
    const char *body; size_t body_len; /* copied */
    /* Or, where body is NULL and body_fn is set: the body body_fn(body_arg, out) writes at
     * the request's first attempt, kept for its retries until the callback. A queue of
     * requests then holds no bodies; body_arg must live until the request is called back
     * (or cancelled), and what it writes must not change between submit and the attempt. */
    void (*body_fn)(void *body_arg, struct bt_buf *out);
    void *body_arg;
    const struct bt_header *headers; size_t nheaders; /* extra headers, copied */
    double timeout;               /* seconds per attempt (0: 10 s) */
    int max_attempts;             /* 0: 3 (AWS SDK standard mode) */
    const char *label;            /* for --verbose and errors, e.g. "cloudwatch us-east-1 GetMetricData" */
};

struct bt_http_resp {
    long status;                  /* HTTP status, 0 on transport failure */
    const char *body; size_t body_len;   /* valid during the callback only; never NULL ("" when none) */
    char content_type[128];
    char error_code[128];         /* the policy's reading of an error answer ("" without a policy) */
    char error_message[256];
    char transport_error[1024];    /* curl's error text, "" if none; also "invalid URL ...",
                                   * "credentials: ..." and "response body exceeds N bytes" */
    enum bt_errkind kind;         /* BT_ERR_NONE below 300; else what failed (the policy's
                                   * reading of an error answer, or network, credentials,
                                   * request, parse for the transport's own failures) */
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

/* Appends s percent-encoded for a URL query (RFC 3986 unreserved characters kept). */
void bt_http_url_escape(struct bt_buf *b, const char *s);
#endif
