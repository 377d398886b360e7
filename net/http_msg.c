/* What one attempt of a transfer sends (URL parts, header lines, the policy's signature)
 * and what it reads back (body within its bound, the headers the policy needs). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/http_int.h"
#include "net/url.h"

void bt_http_i_wipe_slist(struct curl_slist *l)
{
    /* The list held the session token: clear it before it returns to malloc. */
    for (struct curl_slist *p = l; p; p = p->next)
        memset(p->data, 0, strlen(p->data));
    curl_slist_free_all(l);
}

char *bt_http_i_dup(const char *s)
{
    return s ? bt_xstrdup(s) : NULL;
}

/* Header names and values go into raw HTTP lines: no CR/LF, names without ':'. */
bool bt_http_i_header_safe(const char *s, bool is_name)
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

bool bt_http_i_method_ok(const char *m)
{
    size_t n = strlen(m);
    if (n == 0 || n > 16)
        return false;
    for (size_t i = 0; i < n; i++)
        if (m[i] < 'A' || m[i] > 'Z')
            return false;
    return true;
}

/* Splits the URL (through the one parser, net/url.h) into the Host header value, raw path
 * and raw query; the URL sent becomes curl's own normal form, the one logged its redaction. */
bool bt_http_i_parse_url(struct xfer *x)
{
    struct bt_url u;
    if (!bt_url_parse(x->url, &u, x->fail, sizeof x->fail))
        return false;
    long defport = strcmp(u.scheme, "https") == 0 ? 443 : 80;
    struct bt_buf b = { 0 };
    bt_buf_puts(&b, u.host);
    if (u.port && strtol(u.port, NULL, 10) != defport)
        bt_buf_printf(&b, ":%s", u.port);
    x->host_hdr = bt_xstrdup(bt_buf_str(&b));
    bt_buf_free(&b);
    x->path = bt_xstrdup(u.path);
    x->query = u.query ? bt_xstrdup(u.query) : NULL;
    free(x->url_log);
    x->url_log = bt_xstrdup(u.shown);
    free(x->url);
    x->url = bt_xstrdup(u.url);
    bt_url_free(&u);
    return true;
}

size_t bt_http_i_on_body(char *data, size_t size, size_t nmemb, void *userp)
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

size_t bt_http_i_on_header(char *line, size_t size, size_t nmemb, void *userp)
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

struct slist_ctx {
    struct curl_slist **l;
};

static void add_signed_header(void *ctx, const char *name, const char *value)
{
    struct slist_ctx *c = ctx;
    slist_add(c->l, "%s: %s", name, value);
}

/* Builds the header list, signing for this attempt; false with x->fail set. */
bool bt_http_i_build_headers(struct xfer *x)
{
    struct curl_slist *l = NULL;
    size_t nh = 0;
    struct bt_header *sh = bt_xcalloc(x->nheaders + 3, sizeof *sh);
    sh[nh++] = (struct bt_header){.name = "Host", .value = x->host_hdr};
    if (x->content_type)
        sh[nh++] = (struct bt_header){.name = "Content-Type", .value = x->content_type};
    if (x->target)
        sh[nh++] = (struct bt_header){.name = "X-Amz-Target", .value = x->target};
    for (size_t i = 0; i < x->nheaders; i++)
        sh[nh++] = x->headers[i];
    for (size_t i = 0; i < nh; i++)
        slist_add(&l, "%s: %s", sh[i].name, sh[i].value);
    if (!x->content_type)
        slist_add(&l, "%s%s", "Content-Type:", ""); /* no curl default form type */
    bool ok = true;
    if (x->creds && x->service) {
        struct bt_http_msg m = {
            .method = x->method, .path = x->path, .query = x->query, .headers = sh, .nheaders = nh,
            .body = x->body, .body_len = x->body_len, .host = x->host_hdr,
            .service = x->service, .region = x->region,
        };
        struct slist_ctx c = { .l = &l };
        ok = x->policy->sign(x->creds, &m, add_signed_header, &c, x->fail, sizeof x->fail);
        if (!ok)
            x->fail_kind = BT_ERR_CREDENTIALS;
    }
    char attempt[64];
    snprintf(attempt, sizeof attempt, "attempt=%d; max=%d", x->attempts, x->max_attempts);
    slist_add(&l, "%s: %s", "amz-sdk-invocation-id", x->invocation_id);
    slist_add(&l, "%s: %s", "amz-sdk-request", attempt);
    slist_add(&l, "%s%s", "Expect:", ""); /* no 100-continue round trip */
    free(sh);
    if (!ok) {
        bt_http_i_wipe_slist(l);
        return false;
    }
    x->slist = l;
    return true;
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
