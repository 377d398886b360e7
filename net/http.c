/* The HTTP client on one libcurl multi handle. Each request is a transfer that
 * lives through attempts: WAIT (a retry timer, or new) -> RUN (an easy handle
 * in the multi) -> WAIT again or called back. Retries follow the AWS SDKs'
 * standard mode (backoff, budget); the request's policy signs every attempt
 * when it is sent and says which error answers retry. */
#include "net/http.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "net/http_int.h"

/* Retried whatever the policy says: the SDKs' transient statuses. */
static const long transient_status[] = { 500, 502, 503, 504, 429 };

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t bt_http_mono_ms(void)
{
    return mono_ms();
}

/* xorshift64*: jitter only needs to decorrelate clients, not be secret. */
static double rng_uniform(struct bt_http *h)
{
    uint64_t x = h->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    h->rng = x;
    return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

static void seed_rng(struct bt_http *h)
{
    uint64_t seed = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &seed, sizeof seed) != (ssize_t)sizeof seed)
            seed = 0;
        close(fd);
    }
    if (seed == 0)
        seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)h;
    h->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
}

/* ------------------------------------------------------------ lifecycle */

struct bt_http *bt_http_new(int verbose)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return NULL;
    struct bt_http *h = bt_xcalloc(1, sizeof *h);
    h->multi = curl_multi_init();
    if (!h->multi) {
        free(h);
        curl_global_cleanup();
        return NULL;
    }
    curl_multi_setopt(h->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)MAX_HOST_CONNECTIONS);
    curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS, (long)(4 * MAX_HOST_CONNECTIONS));
    h->verbose = verbose;
    h->stats.retry_tokens = BT_HTTP_RETRY_TOKENS;
    h->backoff_base = 1.0;
    h->backoff_max = 20.0;
    h->max_body = BT_HTTP_MAX_BODY;
    seed_rng(h);
    return h;
}

void bt_http_set_backoff(struct bt_http *h, double base_s, double max_s)
{
    if (base_s >= 0)
        h->backoff_base = base_s;
    if (max_s >= 0)
        h->backoff_max = max_s;
}

void bt_http_set_max_body(struct bt_http *h, size_t max_bytes)
{
    h->max_body = max_bytes;
}

/* The index of url's origin (scheme://authority), added when new; -1 when the
 * table is full (such transfers are left to curl's own queue). */
static int origin_of(struct bt_http *h, const char *url)
{
    const char *p = strstr(url, "://");
    size_t n = p ? (size_t)(p + 3 - url) + strcspn(p + 3, "/?#") : strlen(url);
    for (int i = 0; i < h->norigin; i++)
        if (strlen(h->origin[i]) == n && strncmp(h->origin[i], url, n) == 0)
            return i;
    if (h->norigin >= MAX_ORIGINS)
        return -1;
    char *o = bt_xmalloc(n + 1);
    memcpy(o, url, n);
    o[n] = '\0';
    h->origin[h->norigin] = o;
    return h->norigin++;
}

static void release_easy(struct bt_http *h, struct xfer *x)
{
    if (x->slot_held) {
        h->running[x->origin]--;
        x->slot_held = false;
    }
    if (!x->easy)
        return;
    curl_multi_remove_handle(h->multi, x->easy);
    if (h->npool < MAX_POOL) {
        curl_easy_reset(x->easy);
        h->pool[h->npool++] = x->easy;
    } else {
        curl_easy_cleanup(x->easy);
    }
    x->easy = NULL;
    bt_http_i_wipe_slist(x->slist);
    x->slist = NULL;
}

static void xfer_free(struct xfer *x)
{
    free(x->method);
    free(x->url);
    free(x->url_log);
    free(x->service);
    free(x->region);
    free(x->target);
    free(x->content_type);
    free(x->label);
    free(x->host_hdr);
    free(x->path);
    free(x->query);
    free(x->body);
    for (size_t i = 0; i < x->nheaders; i++) {
        free((char *)x->headers[i].name);
        free((char *)x->headers[i].value);
    }
    free(x->headers);
    bt_buf_free(&x->in);
    free(x);
}

static void unlink_xfer(struct bt_http *h, struct xfer *x)
{
    for (struct xfer **pp = &h->list; *pp; pp = &(*pp)->next) {
        if (*pp == x) {
            *pp = x->next;
            x->next = NULL;
            return;
        }
    }
}

void bt_http_free(struct bt_http *h)
{
    if (!h)
        return;
    while (h->list) {
        struct xfer *x = h->list;
        h->list = x->next;
        release_easy(h, x);
        xfer_free(x);
    }
    for (int i = 0; i < h->npool; i++)
        curl_easy_cleanup(h->pool[i]);
    for (int i = 0; i < h->norigin; i++)
        free(h->origin[i]);
    curl_multi_cleanup(h->multi);
    free(h);
    curl_global_cleanup();
}

void bt_http_cancel(struct bt_http *h, bt_http_cb cb, void *arg)
{
    if (!h)
        return;
    struct xfer **pp = &h->list;
    while (*pp) {
        struct xfer *x = *pp;
        if (x->cb == cb && x->arg == arg) {
            *pp = x->next;
            release_easy(h, x);
            xfer_free(x);
        } else {
            pp = &x->next;
        }
    }
}

int bt_http_verbose(const struct bt_http *h)
{
    return h ? h->verbose : 0;
}

int bt_http_watch(struct bt_http *h, int fd, int64_t deadline_ms, bt_http_watch_cb cb, void *arg)
{
    if (!h || !cb || h->nwatch >= MAX_WATCH)
        return -1;
    h->watches[h->nwatch++] = (struct watch){.fd = fd, .deadline_ms = deadline_ms, .cb = cb, .arg = arg};
    return 0;
}

void bt_http_unwatch(struct bt_http *h, int fd, void *arg)
{
    for (int i = 0; h && i < h->nwatch; i++) {
        if (h->watches[i].fd == fd && h->watches[i].arg == arg) {
            h->watches[i] = h->watches[--h->nwatch];
            i--;
        }
    }
}

int bt_http_pending(const struct bt_http *h)
{
    int n = 0;
    for (const struct xfer *x = h->list; x; x = x->next)
        n++;
    return n;
}

const struct bt_http_stats *bt_http_get_stats(const struct bt_http *h)
{
    return &h->stats;
}

void bt_http_wakeup(struct bt_http *h)
{
    curl_multi_wakeup(h->multi);
}

/* ------------------------------------------------------------ submit */

static void make_invocation_id(struct bt_http *h, char out[37])
{
    static const char hex[] = "0123456789abcdef";
    int o = 0;
    for (int i = 0; i < 32; i++) {
        if (i == 8 || i == 12 || i == 16 || i == 20)
            out[o++] = '-';
        int v = (int)(rng_uniform(h) * 16.0) & 15;
        if (i == 12)
            v = 4;
        else if (i == 16)
            v = 8 | (v & 3);
        out[o++] = hex[v];
    }
    out[o] = '\0';
}

int bt_http_submit(struct bt_http *h, const struct bt_http_req *req, bt_http_cb cb, void *arg)
{
    if (!h || !req || !req->url || !cb)
        return -1;
    struct xfer *x = bt_xcalloc(1, sizeof *x);
    x->h = h;
    x->method = bt_xstrdup(req->method ? req->method : "GET");
    x->url = bt_xstrdup(req->url);
    x->origin = origin_of(h, x->url);
    x->url_log = bt_xstrdup("(invalid URL)");
    x->service = bt_http_i_dup(req->service);
    x->region = bt_http_i_dup(req->region);
    x->target = bt_http_i_dup(req->target);
    x->content_type = bt_http_i_dup(req->content_type);
    x->label = bt_xstrdup(req->label ? req->label : "");
    if (!req->body && req->body_fn) {
        x->body_fn = req->body_fn; /* written at the first attempt (lazy_body) */
        x->body_arg = req->body_arg;
    } else {
        x->body_len = req->body ? req->body_len : 0;
        x->body = bt_xmalloc(x->body_len + 1);
        if (x->body_len)
            memcpy(x->body, req->body, x->body_len);
        x->body[x->body_len] = '\0';
    }
    x->policy = req->policy;
    x->creds = req->creds;
    x->timeout_ms = (long)((req->timeout > 0 ? req->timeout : DEFAULT_TIMEOUT) * 1000.0);
    if (x->timeout_ms < 1)
        x->timeout_ms = 1;
    x->max_attempts = req->max_attempts > 0 ? req->max_attempts : DEFAULT_ATTEMPTS;
    x->cb = cb;
    x->arg = arg;
    x->state = X_WAIT;
    x->t0_ms = mono_ms();
    x->due_ms = x->t0_ms;
    x->seq = ++h->seq;
    make_invocation_id(h, x->invocation_id);
    if (req->nheaders && req->headers) {
        x->headers = bt_xcalloc(req->nheaders, sizeof *x->headers);
        for (size_t i = 0; i < req->nheaders; i++) {
            if (!bt_http_i_header_safe(req->headers[i].name, true) || !bt_http_i_header_safe(req->headers[i].value, false)) {
                snprintf(x->fail, sizeof x->fail, "invalid header in request");
                continue;
            }
            x->headers[x->nheaders].name = bt_xstrdup(req->headers[i].name);
            x->headers[x->nheaders].value = bt_xstrdup(req->headers[i].value ? req->headers[i].value : "");
            x->nheaders++;
        }
    }
    if (!bt_http_i_method_ok(x->method))
        snprintf(x->fail, sizeof x->fail, "invalid HTTP method");
    else if (!bt_http_i_header_safe(x->target, false) || !bt_http_i_header_safe(x->content_type, false))
        snprintf(x->fail, sizeof x->fail, "invalid header in request");
    else if (!x->fail[0] && bt_http_i_parse_url(x) && x->creds && (!x->service || !x->region))
        snprintf(x->fail, sizeof x->fail, "signed request needs a service and a Region");
    else if (!x->fail[0] && x->creds && !x->policy)
        snprintf(x->fail, sizeof x->fail, "signed request needs a policy");
    /* Append so requests start in submission order. */
    struct xfer **pp = &h->list;
    while (*pp)
        pp = &(*pp)->next;
    *pp = x;
    h->stats.requests++;
    return 0;
}

/* ------------------------------------------------------------ attempts */

/* Credentials for x: 1 usable now (or none needed), 0 wait for the running refresh,
 * -1 none (x->fail set). */
static int creds_gate(struct bt_http *h, struct xfer *x)
{
    if (!x->creds || !x->service)
        return 1;
    bool waited = x->cred_wait;
    x->cred_wait = false;
    int rc = x->policy->ready(x->creds, h, waited, &x->cred_gen, x->fail, sizeof x->fail);
    if (rc == 0)
        x->cred_wait = true;
    else if (rc < 0)
        x->fail_kind = BT_ERR_CREDENTIALS;
    return rc;
}

static CURL *get_easy(struct bt_http *h)
{
    if (h->npool > 0)
        return h->pool[--h->npool];
    return curl_easy_init();
}

/* A body_fn request's body, written once before its first attempt: the queue behind
 * the running transfers holds none. */
static void lazy_body(struct xfer *x)
{
    if (x->body)
        return;
    struct bt_buf b = {0};
    if (x->body_fn)
        x->body_fn(x->body_arg, &b);
    x->body_len = b.len;
    x->body = b.buf ? b.buf : bt_xstrdup("");
}

static bool start_attempt(struct bt_http *h, struct xfer *x)
{
    lazy_body(x);
    x->attempts++;
    h->stats.attempts++;
    bt_buf_reset(&x->in);
    x->too_big = false;
    x->ctype[0] = x->query_error[0] = x->error_type[0] = x->errbuf[0] = '\0';
    x->server_date = 0;
    if (!bt_http_i_build_headers(x))
        return false;
    CURL *e = get_easy(h);
    if (!e) {
        snprintf(x->fail, sizeof x->fail, "out of curl handles");
        bt_http_i_wipe_slist(x->slist);
        x->slist = NULL;
        return false;
    }
    x->easy = e;
    if (x->origin >= 0) {
        h->running[x->origin]++;
        x->slot_held = true;
    }
    curl_easy_setopt(e, CURLOPT_URL, x->url);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "bedtop/" BEDTOP_VERSION);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->slist);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, bt_http_i_on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, bt_http_i_on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, x->timeout_ms);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, x->timeout_ms < 5000 ? x->timeout_ms : 5000L);
    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)h->max_body);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    if (strcmp(x->method, "GET") == 0) {
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else {
        if (strcmp(x->method, "POST") != 0)
            curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, x->method);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body_len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->body);
    }
    x->attempt_t0 = mono_ms();
    if (curl_multi_add_handle(h->multi, e) != CURLM_OK) {
        snprintf(x->fail, sizeof x->fail, "cannot start transfer");
        release_easy(h, x);
        return false;
    }
    x->state = X_RUN;
    return true;
}

static struct bt_http_answer answer_of(const struct xfer *x, long status)
{
    const char *qh = x->query_error[0] ? x->query_error : (x->error_type[0] ? x->error_type : NULL);
    return (struct bt_http_answer){
        .status = status, .body = x->in.buf ? x->in.buf : "", .body_len = x->in.len, .error_header = qh,
        .server_date = x->server_date, .host = x->host_hdr,
    };
}

/* Without a policy an error answer is judged by its status alone. */
static enum bt_errkind status_kind(long status)
{
    if (status == 429)
        return BT_ERR_THROTTLED;
    if (status == 401 || status == 403)
        return BT_ERR_ACCESS;
    return status >= 500 ? BT_ERR_SERVICE : BT_ERR_REQUEST;
}

/* transport (status 0) is the failure's text and kind its kind; an answer's kind comes from
 * the policy (or its status). */
static void deliver(struct bt_http *h, struct xfer *x, long status, const char *transport, enum bt_errkind kind)
{
    struct bt_http_resp r;
    memset(&r, 0, sizeof r);
    r.status = status;
    r.body = status ? bt_buf_str(&x->in) : "";
    r.body_len = status ? x->in.len : 0;
    bt_strlcpy(r.content_type, x->ctype, sizeof r.content_type);
    r.kind = status == 0 ? kind : BT_ERR_NONE;
    if (status >= 300) {
        struct bt_http_answer a = answer_of(x, status);
        r.kind = x->policy ? x->policy->describe(&a, r.error_code, sizeof r.error_code, r.error_message,
                                                 sizeof r.error_message)
                           : status_kind(status);
    }
    bt_strlcpy(r.transport_error, transport ? transport : "", sizeof r.transport_error);
    r.attempts = x->attempts;
    r.server_date = x->server_date;
    r.elapsed = (double)(mono_ms() - x->t0_ms) / 1000.0;
    r.url = x->url_log; /* for messages: no user:password@, no #fragment */
    unlink_xfer(h, x);
    x->cb(x->arg, &r);
    xfer_free(x);
}

static void log_attempt(struct bt_http *h, struct xfer *x, long status, const char *code,
                        const char *transport, const char *what_next)
{
    if (!h->verbose)
        return;
    long ms = (long)(mono_ms() - x->attempt_t0);
    char result[320];
    if (transport)
        snprintf(result, sizeof result, "error: %s", transport);
    else if (code && *code)
        snprintf(result, sizeof result, "%ld %s", status, code);
    else
        snprintf(result, sizeof result, "%ld", status);
    fprintf(stderr, "bedtop: http: %s %s %s -> %s (%ld ms, attempt %d)%s\n", x->method, x->url_log,
            x->target ? x->target : "-", result, ms, x->attempts, what_next);
}

static bool transport_retryable(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return true;
    default:
        return false;
    }
}

static void schedule(struct xfer *x, int64_t delay_ms)
{
    x->state = X_WAIT;
    x->due_ms = mono_ms() + delay_ms;
}

/* One attempt ended: deliver, or put the transfer back to wait for its retry. */
static int finish_attempt(struct bt_http *h, struct xfer *x, CURLcode rc)
{
    long status = 0;
    curl_off_t sz = 0;
    long hsz = 0, reqsz = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(x->easy, CURLINFO_HEADER_SIZE, &hsz);
    curl_easy_getinfo(x->easy, CURLINFO_REQUEST_SIZE, &reqsz);
    h->stats.bytes_in += (unsigned long)hsz + x->in.len;
    if (curl_easy_getinfo(x->easy, CURLINFO_SIZE_UPLOAD_T, &sz) == CURLE_OK && sz > 0)
        h->stats.bytes_out += (unsigned long)sz;
    h->stats.bytes_out += (unsigned long)reqsz;
    release_easy(h, x);

    char transport[256] = "";
    bool retryable = false, timeout = false, now_retry = false;
    char code[128] = "", msg[256] = "";
    if (rc != CURLE_OK) {
        status = 0;
        if (x->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
            snprintf(transport, sizeof transport, "response body exceeds %zu bytes", h->max_body);
        } else {
            snprintf(transport, sizeof transport, "%s", x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
            retryable = transport_retryable(rc);
            timeout = rc == CURLE_OPERATION_TIMEDOUT;
        }
    } else if (status >= 300) {
        bool throttle = status == 429;
        enum bt_http_next next = BT_HTTP_FINAL;
        if (x->policy) {
            struct bt_http_answer a = answer_of(x, status);
            bool policy_throttle = false;
            x->policy->describe(&a, code, sizeof code, msg, sizeof msg);
            next = x->policy->judge(x->creds, &a, code, msg, &x->fixes, &policy_throttle);
            throttle = throttle || policy_throttle;
        }
        if (throttle)
            h->stats.throttled++;
        now_retry = next == BT_HTTP_RETRY_NOW;
        retryable = next == BT_HTTP_RETRY;
        for (size_t i = 0; i < BT_ARRAY_LEN(transient_status); i++)
            if (status == transient_status[i])
                retryable = true;
    }
    bool failed = rc != CURLE_OK || status >= 300;
    if (!failed) {
        /* Standard mode: a success returns what its last retry cost, else one token. */
        long refund = x->last_cost ? x->last_cost : NO_RETRY_INCREMENT;
        h->stats.retry_tokens += refund;
        if (h->stats.retry_tokens > BT_HTTP_RETRY_TOKENS)
            h->stats.retry_tokens = BT_HTTP_RETRY_TOKENS;
    }
    if (now_retry) {
        /* Corrections (clock, credentials) are not failures of the service: no budget, no wait. */
        h->stats.retries++;
        log_attempt(h, x, status, code, NULL, ", retrying now");
        schedule(x, 0);
        return 0;
    }
    if (retryable && x->attempts < x->max_attempts) {
        long cost = timeout ? TIMEOUT_RETRY_COST : RETRY_COST;
        if (h->stats.retry_tokens >= cost) {
            h->stats.retry_tokens -= cost;
            x->last_cost = (int)cost;
            h->stats.retries++;
            double cap = h->backoff_base * (double)(1u << (x->attempts - 1 < 20 ? x->attempts - 1 : 20));
            if (cap > h->backoff_max)
                cap = h->backoff_max;
            int64_t delay = (int64_t)(rng_uniform(h) * cap * 1000.0);
            char next[64];
            snprintf(next, sizeof next, ", retry in %lld ms", (long long)delay);
            log_attempt(h, x, status, code, rc != CURLE_OK ? transport : NULL, next);
            schedule(x, delay);
            return 0;
        }
        h->stats.retries_denied_by_budget++;
        log_attempt(h, x, status, code, rc != CURLE_OK ? transport : NULL, ", retry budget empty");
    } else {
        log_attempt(h, x, status, code, rc != CURLE_OK ? transport : NULL, "");
    }
    deliver(h, x, status, rc != CURLE_OK ? transport : NULL, x->too_big || rc == CURLE_FILESIZE_EXCEEDED
                                                                ? BT_ERR_PARSE : BT_ERR_NETWORK);
    return 1;
}

/* Starts every waiting transfer that is due (and was queued before this call). */
static int start_due(struct bt_http *h)
{
    int ncb = 0;
    unsigned long limit = h->seq;
    bool again = true;
    while (again) {
        again = false;
        int64_t now = mono_ms();
        for (struct xfer *x = h->list; x; x = x->next) {
            if (x->state != X_WAIT || x->due_ms > now || x->seq > limit)
                continue;
            /* its origin's connections all busy: it waits here, its clock not started
             * (curl would queue it with its timeout running); a finishing one frees a slot */
            x->slot_wait = x->origin >= 0 && h->running[x->origin] >= MAX_HOST_CONNECTIONS;
            if (x->slot_wait)
                continue;
            int gate = x->fail[0] ? -1 : creds_gate(h, x);
            if (gate == 0)
                continue;
            if (gate > 0 && start_attempt(h, x))
                continue;
            if (h->verbose)
                fprintf(stderr, "bedtop: http: %s %s %s -> error: %s\n", x->method, x->url_log,
                        x->target ? x->target : "-", x->fail);
            char fail[sizeof x->fail];
            bt_strlcpy(fail, x->fail, sizeof fail);
            deliver(h, x, 0, fail, x->fail_kind ? x->fail_kind : BT_ERR_REQUEST);
            ncb++;
            again = true; /* the list changed under us */
            break;
        }
    }
    return ncb;
}

static int drain(struct bt_http *h)
{
    int ncb = 0, left, running;
    curl_multi_perform(h->multi, &running);
    for (CURLMsg *m = curl_multi_info_read(h->multi, &left); m; m = curl_multi_info_read(h->multi, &left)) {
        if (m->msg != CURLMSG_DONE)
            continue;
        char *priv = NULL;
        CURLcode rc = m->data.result;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
        struct xfer *x = (struct xfer *)(void *)priv;
        if (x)
            ncb += finish_attempt(h, x, rc);
    }
    return ncb;
}

int bt_http_poll(struct bt_http *h, int timeout_ms, int extra_fd, bool *extra_ready)
{
    if (extra_ready)
        *extra_ready = false;
    int ncb = start_due(h);
    ncb += drain(h);
    ncb += start_due(h);
    int wait = timeout_ms < 0 ? 0 : timeout_ms;
    int64_t now = mono_ms();
    for (const struct xfer *x = h->list; x; x = x->next) {
        if (x->state != X_WAIT || x->cred_wait || x->slot_wait)
            continue;
        int64_t d = x->due_ms - now;
        if (d < wait)
            wait = d < 0 ? 0 : (int)d;
    }
    for (int i = 0; i < h->nwatch; i++) {
        if (!h->watches[i].deadline_ms)
            continue;
        int64_t d = h->watches[i].deadline_ms - now;
        if (d < wait)
            wait = d < 0 ? 0 : (int)d;
    }
    if (ncb > 0)
        wait = 0; /* let the caller act on what just arrived */
    struct curl_waitfd wfd[MAX_WATCH + 1];
    struct watch snap[MAX_WATCH];
    unsigned n = 0;
    int nsnap = h->nwatch;
    memcpy(snap, h->watches, sizeof snap[0] * (size_t)nsnap);
    for (int i = 0; i < nsnap; i++) {
        if (snap[i].fd >= 0) {
            wfd[n++] = (struct curl_waitfd){ .fd = snap[i].fd, .events = CURL_WAIT_POLLIN, .revents = 0 };
        }
    }
    int extra_slot = -1;
    if (extra_fd >= 0) {
        extra_slot = (int)n;
        wfd[n++] = (struct curl_waitfd){ .fd = extra_fd, .events = CURL_WAIT_POLLIN, .revents = 0 };
    }
    int nfds = 0;
    CURLMcode mc = curl_multi_poll(h->multi, n ? wfd : NULL, n, wait, &nfds);
    if (mc != CURLM_OK)
        return -1;
    if (extra_slot >= 0 && extra_ready && (wfd[extra_slot].revents & CURL_WAIT_POLLIN))
        *extra_ready = true;
    ncb += drain(h);
    /* Watches: each one still registered gets its event (a callback may add or drop watches).
     * curl reports only POLLIN/POLLPRI/POLLOUT, so ask poll() again for hang-ups (a child's EOF). */
    struct pollfd pf[MAX_WATCH];
    for (int i = 0; i < nsnap; i++)
        pf[i] = (struct pollfd){ .fd = snap[i].fd, .events = POLLIN, .revents = 0 };
    if (nsnap > 0 && poll(pf, (nfds_t)nsnap, 0) < 0)
        for (int i = 0; i < nsnap; i++)
            pf[i].revents = 0;
    now = mono_ms();
    for (int i = 0; i < nsnap; i++) {
        bool ready = snap[i].fd >= 0 && (pf[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL));
        bool late = snap[i].deadline_ms && now >= snap[i].deadline_ms;
        if (!ready && !late)
            continue;
        bool still = false;
        for (int k = 0; k < h->nwatch && !still; k++)
            still = h->watches[k].fd == snap[i].fd && h->watches[k].arg == snap[i].arg &&
                    h->watches[k].cb == snap[i].cb;
        if (!still)
            continue;
        snap[i].cb(snap[i].arg, snap[i].fd, !ready && late);
        ncb++;
    }
    ncb += start_due(h);
    return ncb;
}
