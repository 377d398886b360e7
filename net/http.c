/* The HTTP layer on one libcurl multi handle. Each request is a transfer that
 * lives through attempts: WAIT (a retry timer, or new) -> RUN (an easy handle
 * in the multi) -> WAIT again or called back. Retries follow the AWS SDKs'
 * standard mode; every attempt is signed again when it is sent. */
#include "net/http.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

#define DEFAULT_TIMEOUT 10.0
#define DEFAULT_ATTEMPTS 3
#define RETRY_COST 5
#define TIMEOUT_RETRY_COST 10
#define NO_RETRY_INCREMENT 1
#define EXPIRY_MARGIN 300        /* refresh credentials this close to expiry (s) */
#define SKEW_MIN 240             /* SignatureDoesNotMatch counts as skew beyond this (s) */
#define MAX_SKEW_HOSTS 16
#define MAX_POOL 8
#define MAX_HOST_CONNECTIONS 4

enum xfer_state { X_WAIT, X_RUN };

struct xfer {
    struct xfer *next;
    struct bt_http *h;
    enum xfer_state state;
    unsigned long seq;
    char *method, *url, *url_log, *service, *region, *target, *content_type, *label;
    char *host_hdr, *path, *query;
    char *body;
    size_t body_len;
    struct bt_header *headers;
    size_t nheaders;
    struct bt_creds_provider *creds;
    long timeout_ms;
    int max_attempts;
    bt_http_cb cb;
    void *arg;
    char invocation_id[37];
    char fail[1024];             /* set before sending: deliver this failure (whole) */
    /* per attempt */
    int64_t due_ms;
    CURL *easy;
    struct curl_slist *slist;
    struct bt_buf in;
    bool too_big;
    char ctype[128];
    char query_error[160];
    char error_type[160];
    int64_t server_date;
    char errbuf[CURL_ERROR_SIZE];
    int64_t attempt_t0;
    /* across attempts */
    int attempts;
    int last_cost;
    bool skew_fixed, refreshed;
    int64_t t0_ms;
    bool cred_wait;              /* waiting for its provider's refresh */
    unsigned cred_gen;           /* the provider's gen when the wait began */
};

#define MAX_WATCH 32
struct watch {
    int fd;
    int64_t deadline_ms;
    bt_http_watch_cb cb;
    void *arg;
};

struct skew {
    char host[256];
    int64_t offset;
};

struct bt_http {
    CURLM *multi;
    int verbose;
    struct bt_http_stats stats;
    struct xfer *list;
    unsigned long seq;
    CURL *pool[MAX_POOL];
    int npool;
    struct skew skews[MAX_SKEW_HOSTS];
    int nskews, skew_next;
    double backoff_base, backoff_max;
    size_t max_body;
    uint64_t rng;
    struct watch watches[MAX_WATCH];
    int nwatch;
};

static const char *const throttle_codes[] = {
    "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
    "TooManyRequestsException", "ProvisionedThroughputExceededException",
    "TransactionInProgressException", "RequestLimitExceeded", "BandwidthLimitExceeded",
    "LimitExceededException", "RequestThrottled", "SlowDown", "PriorRequestNotComplete",
    "EC2ThrottledException",
};
static const char *const transient_codes[] = {
    "RequestTimeout", "RequestTimeoutException", "InternalError",
};
static const char *const expired_token_codes[] = {
    "ExpiredToken", "ExpiredTokenException", "InvalidClientTokenId",
};
static const long transient_status[] = { 500, 502, 503, 504, 429 };

static bool in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return true;
    return false;
}

bool bt_http_is_throttle_code(const char *code)
{
    return code && in_list(code, throttle_codes, BT_ARRAY_LEN(throttle_codes));
}

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

/* ------------------------------------------------------------ error codes */

/* "com.amazonaws.cloudwatch#ThrottlingException:http://..." -> "ThrottlingException" */
static void normalize_code(const char *src, size_t n, char *code, size_t codelen)
{
    size_t start = 0, end = n;
    for (size_t i = 0; i < n; i++) {
        if (src[i] == ':' || src[i] == ';') {
            end = i;
            break;
        }
    }
    for (size_t i = 0; i < end; i++)
        if (src[i] == '#')
            start = i + 1;
    while (start < end && (src[start] == ' ' || src[start] == '\t'))
        start++;
    while (end > start && (src[end - 1] == ' ' || src[end - 1] == '\t' || src[end - 1] == '\r' ||
                           src[end - 1] == '\n'))
        end--;
    size_t o = 0;
    for (size_t i = start; i < end && o + 1 < codelen; i++) {
        unsigned char c = (unsigned char)src[i];
        code[o++] = (c > 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (codelen)
        code[o] = '\0';
}

static void copy_message(const char *src, size_t n, char *msg, size_t msglen)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < msglen; i++) {
        unsigned char c = (unsigned char)src[i];
        msg[o++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
    }
    if (msglen)
        msg[o] = '\0';
}

static const char *json_str(const cJSON *obj, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, names[i]);
        if (cJSON_IsString(it) && it->valuestring)
            return it->valuestring;
    }
    return NULL;
}

/* <Code>X</Code> of a query-protocol (XML) error body, bounded by len. */
static bool xml_elem(const char *body, size_t len, const char *tag, const char **val, size_t *vlen)
{
    char open_tag[32], close_tag[32];
    snprintf(open_tag, sizeof open_tag, "<%s>", tag);
    snprintf(close_tag, sizeof close_tag, "</%s>", tag);
    size_t ol = strlen(open_tag), cl = strlen(close_tag);
    for (size_t i = 0; i + ol <= len; i++) {
        if (memcmp(body + i, open_tag, ol) != 0)
            continue;
        size_t s = i + ol;
        for (size_t j = s; j + cl <= len; j++) {
            if (memcmp(body + j, close_tag, cl) == 0) {
                *val = body + s;
                *vlen = j - s;
                return true;
            }
        }
        return false;
    }
    return false;
}

int bt_http_error_code(const char *body, size_t len, const char *query_error_header,
                       char *code, size_t codelen, char *msg, size_t msglen)
{
    static const char *const code_keys[] = { "__type", "code", "Code" };
    static const char *const msg_keys[] = { "message", "Message", "errorMessage" };
    if (codelen)
        code[0] = '\0';
    if (msglen)
        msg[0] = '\0';
    if (query_error_header && *query_error_header)
        normalize_code(query_error_header, strlen(query_error_header), code, codelen);
    if (!body || len == 0)
        return codelen && code[0] ? 0 : -1;
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (cJSON_IsObject(root)) {
        const char *c = json_str(root, code_keys, BT_ARRAY_LEN(code_keys));
        const char *m = json_str(root, msg_keys, BT_ARRAY_LEN(msg_keys));
        if (c && codelen && !code[0])
            normalize_code(c, strlen(c), code, codelen);
        if (m)
            copy_message(m, strlen(m), msg, msglen);
    } else if (!root) {
        const char *v;
        size_t vl;
        if (codelen && !code[0] && xml_elem(body, len, "Code", &v, &vl))
            normalize_code(v, vl, code, codelen);
        if (xml_elem(body, len, "Message", &v, &vl))
            copy_message(v, vl, msg, msglen);
    }
    cJSON_Delete(root);
    return codelen && code[0] ? 0 : -1;
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

static void wipe_free_slist(struct curl_slist *l)
{
    /* The list held the session token: clear it before it returns to malloc. */
    for (struct curl_slist *p = l; p; p = p->next)
        memset(p->data, 0, strlen(p->data));
    curl_slist_free_all(l);
}

static void release_easy(struct bt_http *h, struct xfer *x)
{
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
    wipe_free_slist(x->slist);
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
    h->watches[h->nwatch++] = (struct watch){fd, deadline_ms, cb, arg};
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

void bt_creds_provider_done(struct bt_creds_provider *p, const struct bt_creds *c, const char *err)
{
    p->pending = false;
    p->gen++;
    if (c) {
        bt_creds_copy(&p->creds, c);
        p->valid = true;
        p->error[0] = '\0';
        p->next_try = 0;
    } else {
        bt_strlcpy(p->error, err && *err ? err : "refresh failed", sizeof p->error);
        p->next_try = (int64_t)time(NULL) + 30;
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

static char *dup_or_null(const char *s)
{
    return s ? bt_xstrdup(s) : NULL;
}

/* Header names and values go into raw HTTP lines: no CR/LF, names without ':'. */
static bool header_safe(const char *s, bool is_name)
{
    if (!s)
        return !is_name;
    if (is_name && !*s)
        return false;
    for (; *s; s++) {
        if (*s == '\r' || *s == '\n' || (is_name && (*s == ':' || *s == ' ')))
            return false;
    }
    return true;
}

static bool method_ok(const char *m)
{
    size_t n = strlen(m);
    if (n == 0 || n > 16)
        return false;
    for (size_t i = 0; i < n; i++)
        if (m[i] < 'A' || m[i] > 'Z')
            return false;
    return true;
}

/* Splits the URL into the Host header value, raw path and raw query; builds the
 * URL used in logs (without any user:password). */
static bool parse_url(struct xfer *x)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *query = NULL, *clean = NULL;
    bool ok = false;
    if (!u || curl_url_set(u, CURLUPART_URL, x->url, 0) != CURLUE_OK) {
        snprintf(x->fail, sizeof x->fail, "invalid URL");
        goto out;
    }
    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
    if (!scheme || (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
        snprintf(x->fail, sizeof x->fail, "invalid URL: only http and https are supported");
        goto out;
    }
    if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !host) {
        snprintf(x->fail, sizeof x->fail, "invalid URL: no host");
        goto out;
    }
    curl_url_get(u, CURLUPART_PORT, &port, 0);
    curl_url_get(u, CURLUPART_PATH, &path, 0);
    curl_url_get(u, CURLUPART_QUERY, &query, 0);
    long defport = strcmp(scheme, "https") == 0 ? 443 : 80;
    struct bt_buf b = { 0 };
    bt_buf_puts(&b, host);
    if (port && strtol(port, NULL, 10) != defport)
        bt_buf_printf(&b, ":%s", port);
    x->host_hdr = bt_xstrdup(bt_buf_str(&b));
    bt_buf_free(&b);
    x->path = bt_xstrdup(path && *path ? path : "/");
    x->query = query && *query ? bt_xstrdup(query) : NULL;
    /* the logged URL: user:***@ for a password (***@ for a user alone, maybe a token) */
    char *user = NULL, *pass = NULL;
    curl_url_get(u, CURLUPART_USER, &user, 0);
    curl_url_get(u, CURLUPART_PASSWORD, &pass, 0);
    if (pass)
        curl_url_set(u, CURLUPART_PASSWORD, "***", 0);
    else if (user)
        curl_url_set(u, CURLUPART_USER, "***", 0);
    curl_free(user);
    curl_free(pass);
    curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0);
    if (curl_url_get(u, CURLUPART_URL, &clean, 0) == CURLUE_OK && clean) {
        free(x->url_log);
        x->url_log = bt_xstrdup(clean);
    }
    ok = true;
out:
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_free(query);
    curl_free(clean);
    curl_url_cleanup(u);
    return ok;
}

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
    x->url_log = bt_xstrdup("(invalid URL)");
    x->service = dup_or_null(req->service);
    x->region = dup_or_null(req->region);
    x->target = dup_or_null(req->target);
    x->content_type = dup_or_null(req->content_type);
    x->label = bt_xstrdup(req->label ? req->label : "");
    x->body_len = req->body ? req->body_len : 0;
    x->body = bt_xmalloc(x->body_len + 1);
    if (x->body_len)
        memcpy(x->body, req->body, x->body_len);
    x->body[x->body_len] = '\0';
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
            if (!header_safe(req->headers[i].name, true) || !header_safe(req->headers[i].value, false)) {
                snprintf(x->fail, sizeof x->fail, "invalid header in request");
                continue;
            }
            x->headers[x->nheaders].name = bt_xstrdup(req->headers[i].name);
            x->headers[x->nheaders].value = bt_xstrdup(req->headers[i].value ? req->headers[i].value : "");
            x->nheaders++;
        }
    }
    if (!method_ok(x->method))
        snprintf(x->fail, sizeof x->fail, "invalid HTTP method");
    else if (!header_safe(x->target, false) || !header_safe(x->content_type, false))
        snprintf(x->fail, sizeof x->fail, "invalid header in request");
    else if (!x->fail[0] && parse_url(x) && x->creds && (!x->service || !x->region))
        snprintf(x->fail, sizeof x->fail, "signed request needs a service and a Region");
    /* Append so requests start in submission order. */
    struct xfer **pp = &h->list;
    while (*pp)
        pp = &(*pp)->next;
    *pp = x;
    h->stats.requests++;
    return 0;
}

/* ------------------------------------------------------------ attempts */

static int64_t skew_for(const struct bt_http *h, const char *host)
{
    for (int i = 0; i < h->nskews; i++)
        if (strcmp(h->skews[i].host, host) == 0)
            return h->skews[i].offset;
    return 0;
}

static void skew_set(struct bt_http *h, const char *host, int64_t offset)
{
    for (int i = 0; i < h->nskews; i++) {
        if (strcmp(h->skews[i].host, host) == 0) {
            h->skews[i].offset = offset;
            return;
        }
    }
    int slot = h->nskews < MAX_SKEW_HOSTS ? h->nskews++ : h->skew_next++ % MAX_SKEW_HOSTS;
    bt_strlcpy(h->skews[slot].host, host, sizeof h->skews[slot].host);
    h->skews[slot].offset = offset;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
    struct xfer *x = userp;
    size_t n = size * nmemb;
    if (x->in.len + n > x->h->max_body) {
        x->too_big = true;
        return 0;
    }
    bt_buf_add(&x->in, data, n);
    return n;
}

static void header_value(const char *line, size_t n, size_t namelen, char *out, size_t outlen)
{
    size_t s = namelen + 1, e = n;
    while (s < e && (line[s] == ' ' || line[s] == '\t'))
        s++;
    while (e > s && (line[e - 1] == '\r' || line[e - 1] == '\n' || line[e - 1] == ' '))
        e--;
    size_t len = e - s;
    if (len >= outlen)
        len = outlen - 1;
    memcpy(out, line + s, len);
    out[len] = '\0';
}

static bool header_is(const char *line, size_t n, const char *name)
{
    size_t nl = strlen(name);
    return n > nl && line[nl] == ':' && strncasecmp(line, name, nl) == 0;
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *userp)
{
    struct xfer *x = userp;
    size_t n = size * nmemb;
    if (n >= 5 && memcmp(line, "HTTP/", 5) == 0) {
        /* A new response (after 100 Continue): forget the previous one's headers. */
        x->ctype[0] = x->query_error[0] = x->error_type[0] = '\0';
        x->server_date = 0;
    } else if (header_is(line, n, "Content-Type")) {
        header_value(line, n, strlen("Content-Type"), x->ctype, sizeof x->ctype);
    } else if (header_is(line, n, "x-amzn-query-error")) {
        header_value(line, n, strlen("x-amzn-query-error"), x->query_error, sizeof x->query_error);
    } else if (header_is(line, n, "x-amzn-ErrorType")) {
        header_value(line, n, strlen("x-amzn-ErrorType"), x->error_type, sizeof x->error_type);
    } else if (header_is(line, n, "Date")) {
        char d[128];
        header_value(line, n, strlen("Date"), d, sizeof d);
        time_t t = curl_getdate(d, NULL);
        x->server_date = t > 0 ? (int64_t)t : 0;
    }
    return n;
}

static void slist_add(struct curl_slist **l, const char *fmt, const char *a, const char *b)
{
    char line[4096];
    struct bt_buf big = { 0 };
    int n = snprintf(line, sizeof line, fmt, a, b);
    const char *s = line;
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line) {
        bt_buf_printf(&big, fmt, a, b);
        s = bt_buf_str(&big);
    }
    struct curl_slist *nl = curl_slist_append(*l, s);
    if (nl)
        *l = nl;
    if (big.buf)
        memset(big.buf, 0, big.len);
    bt_buf_free(&big);
}

/* Credentials for x: 1 usable now, 0 wait for the running refresh, -1 none (x->fail set).
 * Starts a refresh when they are missing or close to expiry; while it runs, requests use the
 * old ones if they have not expired yet, so a refresh never stalls polling. */
static int creds_gate(struct bt_http *h, struct xfer *x, int64_t now)
{
    struct bt_creds_provider *p = x->creds;
    if (!p || !x->service)
        return 1;
    bool waited = x->cred_wait && x->cred_gen != p->gen; /* a refresh ended since we began waiting */
    x->cred_wait = false;
    bool expired = p->valid && p->creds.expiration && p->creds.expiration <= now;
    bool expiring = p->valid && p->creds.expiration && p->creds.expiration - now < EXPIRY_MARGIN;
    if (!p->pending && !waited && p->refresh &&
        (!p->valid || expired || (expiring && now >= p->next_try))) {
        char err[1024] = "";
        int rc = p->refresh(p, h, err, sizeof err);
        if (rc == 1) {
            p->pending = true;
        } else {
            p->gen++;
            if (rc == 0) {
                p->valid = true;
                p->error[0] = '\0';
            } else {
                bt_strlcpy(p->error, err[0] ? err : "refresh failed", sizeof p->error);
                p->next_try = now + 30;
            }
        }
        expired = p->valid && p->creds.expiration && p->creds.expiration <= now;
    }
    if (p->pending && !(p->valid && !expired)) {
        x->cred_wait = true;
        x->cred_gen = p->gen;
        return 0;
    }
    if (!p->valid) {
        snprintf(x->fail, sizeof x->fail, "credentials: %s", p->error[0] ? p->error : "none available");
        return -1;
    }
    if (expired) {
        snprintf(x->fail, sizeof x->fail, "credentials: expired (%s)",
                 p->error[0] ? p->error : "no refresh");
        return -1;
    }
    return 1;
}

/* Builds the header list, signing for this attempt; false with x->fail set. */
static bool build_headers(struct xfer *x)
{
    struct bt_http *h = x->h;
    struct curl_slist *l = NULL;
    size_t nh = 0;
    struct bt_header *sh = bt_xcalloc(x->nheaders + 3, sizeof *sh);
    sh[nh++] = (struct bt_header){ "Host", x->host_hdr };
    if (x->content_type)
        sh[nh++] = (struct bt_header){ "Content-Type", x->content_type };
    if (x->target)
        sh[nh++] = (struct bt_header){ "X-Amz-Target", x->target };
    for (size_t i = 0; i < x->nheaders; i++)
        sh[nh++] = x->headers[i];
    for (size_t i = 0; i < nh; i++)
        slist_add(&l, "%s: %s", sh[i].name, sh[i].value);
    if (!x->content_type)
        slist_add(&l, "%s%s", "Content-Type:", ""); /* no curl default form type */
    bool ok = true;
    if (x->creds && x->service) {
        int64_t now = (int64_t)time(NULL);
        if (!x->creds->valid) {
            snprintf(x->fail, sizeof x->fail, "credentials: none available");
            ok = false;
        } else {
            struct bt_sigv4_req sr = {
                .method = x->method, .path = x->path, .query = x->query,
                .headers = sh, .nheaders = nh, .body = x->body, .body_len = x->body_len,
                .region = x->region, .service = x->service,
                .now = now + skew_for(h, x->host_hdr), .normalize_path = true,
            };
            struct bt_sigv4_out out;
            memset(&out, 0, sizeof out);
            if (bt_sigv4_sign(&sr, &x->creds->creds, &out) != 0) {
                snprintf(x->fail, sizeof x->fail, "signing failed (bad request or credentials)");
                ok = false;
            } else {
                slist_add(&l, "%s: %s", "X-Amz-Date", out.amz_date);
                if (x->creds->creds.session_token)
                    slist_add(&l, "%s: %s", "X-Amz-Security-Token", x->creds->creds.session_token);
                slist_add(&l, "%s: %s", "Authorization", out.authorization);
                bt_sigv4_out_free(&out);
            }
            memset(&out, 0, sizeof out);
        }
    }
    char attempt[64];
    snprintf(attempt, sizeof attempt, "attempt=%d; max=%d", x->attempts, x->max_attempts);
    slist_add(&l, "%s: %s", "amz-sdk-invocation-id", x->invocation_id);
    slist_add(&l, "%s: %s", "amz-sdk-request", attempt);
    slist_add(&l, "%s%s", "Expect:", ""); /* no 100-continue round trip */
    free(sh);
    if (!ok) {
        wipe_free_slist(l);
        return false;
    }
    x->slist = l;
    return true;
}

static CURL *get_easy(struct bt_http *h)
{
    if (h->npool > 0)
        return h->pool[--h->npool];
    return curl_easy_init();
}

static bool start_attempt(struct bt_http *h, struct xfer *x)
{
    x->attempts++;
    h->stats.attempts++;
    bt_buf_reset(&x->in);
    x->too_big = false;
    x->ctype[0] = x->query_error[0] = x->error_type[0] = x->errbuf[0] = '\0';
    x->server_date = 0;
    if (!build_headers(x))
        return false;
    CURL *e = get_easy(h);
    if (!e) {
        snprintf(x->fail, sizeof x->fail, "out of curl handles");
        wipe_free_slist(x->slist);
        x->slist = NULL;
        return false;
    }
    x->easy = e;
    curl_easy_setopt(e, CURLOPT_URL, x->url);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "bedtop/" BEDTOP_VERSION);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->slist);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
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

static void deliver(struct bt_http *h, struct xfer *x, long status, const char *transport)
{
    struct bt_http_resp r;
    memset(&r, 0, sizeof r);
    r.status = status;
    r.body = status ? bt_buf_str(&x->in) : "";
    r.body_len = status ? x->in.len : 0;
    bt_strlcpy(r.content_type, x->ctype, sizeof r.content_type);
    if (status >= 300) {
        const char *qh = x->query_error[0] ? x->query_error : (x->error_type[0] ? x->error_type : NULL);
        bt_http_error_code(x->in.buf, x->in.len, qh, r.error_code, sizeof r.error_code,
                           r.error_message, sizeof r.error_message);
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

static bool is_skew_error(const char *code, const char *msg, int64_t offset)
{
    if (strcmp(code, "RequestTimeTooSkewed") == 0 || strcmp(code, "RequestExpired") == 0)
        return true;
    if (strcmp(code, "InvalidSignatureException") == 0)
        return strstr(msg, "Signature expired") != NULL;
    if (strcmp(code, "SignatureDoesNotMatch") == 0)
        return offset > SKEW_MIN || offset < -SKEW_MIN;
    return false;
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
        const char *qh = x->query_error[0] ? x->query_error : (x->error_type[0] ? x->error_type : NULL);
        bt_http_error_code(x->in.buf, x->in.len, qh, code, sizeof code, msg, sizeof msg);
        int64_t offset = x->server_date ? x->server_date - (int64_t)time(NULL) : 0;
        bool throttle = bt_http_is_throttle_code(code) || status == 429;
        if (throttle)
            h->stats.throttled++;
        if (!x->skew_fixed && x->server_date && x->creds && is_skew_error(code, msg, offset)) {
            skew_set(h, x->host_hdr, offset);
            x->skew_fixed = true;
            now_retry = true;
        } else if (!x->refreshed && x->creds && x->creds->refresh &&
                   in_list(code, expired_token_codes, BT_ARRAY_LEN(expired_token_codes))) {
            x->refreshed = true;
            x->creds->valid = false;
            now_retry = true;
        } else {
            retryable = throttle || in_list(code, transient_codes, BT_ARRAY_LEN(transient_codes));
            for (size_t i = 0; i < BT_ARRAY_LEN(transient_status); i++)
                if (status == transient_status[i])
                    retryable = true;
        }
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
    deliver(h, x, status, rc != CURLE_OK ? transport : NULL);
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
            int gate = x->fail[0] ? -1 : creds_gate(h, x, (int64_t)time(NULL));
            if (gate == 0)
                continue;
            if (gate > 0 && start_attempt(h, x))
                continue;
            if (h->verbose)
                fprintf(stderr, "bedtop: http: %s %s %s -> error: %s\n", x->method, x->url_log,
                        x->target ? x->target : "-", x->fail);
            char fail[sizeof x->fail];
            bt_strlcpy(fail, x->fail, sizeof fail);
            deliver(h, x, 0, fail);
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
    CURLMsg *m;
    while ((m = curl_multi_info_read(h->multi, &left)) != NULL) {
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
        if (x->state != X_WAIT || x->cred_wait)
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

void bt_http_url_escape(struct bt_buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c) || strchr("-_.~", c))
            bt_buf_putc(b, (char)c);
        else
            bt_buf_printf(b, "%%%02X", c);
    }
}
