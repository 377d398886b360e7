/* SigV4 header signing: canonical request, string to sign, signature.
 * Follows the AWS "Create a signed AWS API request" page; where the two test
 * suites disagree (obs-fold headers) the newer aws-c-auth suite wins. */
#include "aws/sigv4.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/util.h"

#define SIGV4_ALGO "AWS4-HMAC-SHA256"

void bt_creds_clear(struct bt_creds *c)
{
    if (!c)
        return;
    if (c->session_token) {
        OPENSSL_cleanse(c->session_token, strlen(c->session_token));
        free(c->session_token);
    }
    OPENSSL_cleanse(c, sizeof *c);
    c->session_token = NULL;
}

void bt_creds_copy(struct bt_creds *dst, const struct bt_creds *src)
{
    if (dst == src)
        return;
    bt_creds_clear(dst);
    memcpy(dst, src, sizeof *dst);
    dst->session_token = src->session_token ? bt_xstrdup(src->session_token) : NULL;
}

static void hex_encode(const unsigned char *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

void bt_sigv4_sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_Digest(data ? data : "", len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32) {
        out[0] = '\0';
        return;
    }
    hex_encode(md, 32, out);
}

static bool hmac256(const void *key, size_t keylen, const void *msg, size_t msglen,
                    unsigned char out[32])
{
    unsigned int outlen = 0;
    if (!HMAC(EVP_sha256(), key, (int)keylen, msg, msglen, out, &outlen))
        return false;
    return outlen == 32;
}

static bool is_unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.' || c == '~';
}

/* Percent-encodes with the SigV4 unreserved set; keep_slash for paths. */
static void uri_encode(struct bt_buf *b, const char *s, size_t n, bool keep_slash)
{
    static const char digits[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (is_unreserved(c) || (keep_slash && c == '/')) {
            bt_buf_putc(b, (char)c);
        } else {
            bt_buf_putc(b, '%');
            bt_buf_putc(b, digits[c >> 4]);
            bt_buf_putc(b, digits[c & 15]);
        }
    }
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes %XX; a malformed escape stays literal (and is then encoded as %25). */
static void uri_decode(struct bt_buf *b, const char *s, size_t n)
{
    bt_buf_reset(b);
    bt_buf_reserve(b, n);
    b->buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int hi = i + 2 < n ? hexval(s[i + 1]) : -1;
        int lo = i + 2 < n ? hexval(s[i + 2]) : -1;
        if (s[i] == '%' && hi >= 0 && lo >= 0) {
            bt_buf_putc(b, (char)(hi * 16 + lo));
            i += 2;
        } else {
            bt_buf_putc(b, s[i]);
        }
    }
}

/* RFC 3986 remove_dot_segments plus collapsing empty segments ("//"). */
static void normalize_path(struct bt_buf *out, const char *path)
{
    size_t plen = strlen(path);
    size_t *starts = bt_xcalloc(plen + 1, sizeof *starts);
    size_t *lens = bt_xcalloc(plen + 1, sizeof *lens);
    size_t nseg = 0;
    bool trailing = false;
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p) {
            trailing = true;
            break;
        }
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        trailing = false;
        if (n == 1 && p[0] == '.') {
            trailing = true;
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (nseg)
                nseg--;
            trailing = true;
        } else {
            starts[nseg] = (size_t)(p - path);
            lens[nseg] = n;
            nseg++;
        }
        p += n;
    }
    bt_buf_putc(out, '/');
    for (size_t i = 0; i < nseg; i++) {
        if (i)
            bt_buf_putc(out, '/');
        bt_buf_add(out, path + starts[i], lens[i]);
    }
    if (nseg && trailing)
        bt_buf_putc(out, '/');
    free(starts);
    free(lens);
}

struct qparam {
    char *key;
    char *val;
};

static int qparam_cmp(const void *a, const void *b)
{
    const struct qparam *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : strcmp(x->val, y->val);
}

static void canonical_query(struct bt_buf *out, const char *query)
{
    if (!query || !*query)
        return;
    size_t cap = 1;
    for (const char *p = query; *p; p++)
        cap += *p == '&';
    struct qparam *params = bt_xcalloc(cap, sizeof *params);
    size_t np = 0;
    const char *p = query;
    while (*p) {
        const char *amp = strchr(p, '&');
        size_t n = amp ? (size_t)(amp - p) : strlen(p);
        if (n) {
            const char *eq = memchr(p, '=', n);
            size_t klen = eq ? (size_t)(eq - p) : n;
            struct bt_buf raw = {0}, enc = {0};
            uri_decode(&raw, p, klen);
            uri_encode(&enc, raw.buf, raw.len, false);
            params[np].key = bt_xstrdup(bt_buf_str(&enc));
            bt_buf_reset(&enc);
            if (eq)
                uri_decode(&raw, eq + 1, n - klen - 1);
            else
                bt_buf_reset(&raw);
            uri_encode(&enc, raw.buf ? raw.buf : "", raw.len, false);
            params[np].val = bt_xstrdup(bt_buf_str(&enc));
            bt_buf_free(&raw);
            bt_buf_free(&enc);
            np++;
        }
        p += n;
        if (*p == '&')
            p++;
    }
    qsort(params, np, sizeof *params, qparam_cmp);
    for (size_t i = 0; i < np; i++) {
        if (i)
            bt_buf_putc(out, '&');
        bt_buf_printf(out, "%s=%s", params[i].key, params[i].val);
        free(params[i].key);
        free(params[i].val);
    }
    free(params);
}

struct chdr {
    char *name;    /* lowercased */
    char *value;   /* trimmed, blank runs collapsed, obs-fold folded */
    size_t order;  /* position as sent: duplicates join in this order */
};

static int chdr_cmp(const void *a, const void *b)
{
    const struct chdr *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* A token per RFC 9110: visible ASCII minus separators; anything else is bad input. */
static bool valid_header_name(const char *s)
{
    if (!s || !*s)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p <= 32 || *p >= 127 || strchr("\"(),/:;<=>?@[\\]{}", *p))
            return false;
    }
    return true;
}

static char *lower_dup(const char *s)
{
    char *d = bt_xstrdup(s);
    for (char *p = d; *p; p++) {
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    }
    return d;
}

/* Trims and collapses any run of blanks (including folded line breaks) to one space. */
static char *canonical_value(const char *v)
{
    struct bt_buf b = {0};
    bool pending_space = false;
    for (const char *p = v; *p; p++) {
        if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
            pending_space = b.len > 0;
            continue;
        }
        if (pending_space)
            bt_buf_putc(&b, ' ');
        pending_space = false;
        bt_buf_putc(&b, *p);
    }
    char *s = bt_xstrdup(bt_buf_str(&b));
    bt_buf_free(&b);
    return s;
}

static bool valid_amz_date(const char *s)
{
    if (strlen(s) != 16 || s[8] != 'T' || s[15] != 'Z')
        return false;
    for (int i = 0; i < 15; i++) {
        if (i != 8 && (s[i] < '0' || s[i] > '9'))
            return false;
    }
    return true;
}

/* Scope parts go into the Credential field: no '/', blanks or controls. */
static bool valid_scope_part(const char *s)
{
    if (!s || !*s)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p <= 32 || *p >= 127 || *p == '/' || *p == ',')
            return false;
    }
    return true;
}

static const char *find_header(const struct bt_sigv4_req *req, const char *lname)
{
    for (size_t i = 0; i < req->nheaders; i++) {
        if (req->headers[i].name && bt_streq_nocase(req->headers[i].name, lname))
            return req->headers[i].value;
    }
    return NULL;
}

static void free_chdrs(struct chdr *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(h[i].name);
        free(h[i].value);
    }
    free(h);
}

/* Builds "name:value\n" lines and the signed-headers list; false on bad headers. */
static bool canonical_headers(const struct bt_sigv4_req *req, const struct bt_creds *creds,
                              const char *amz_date, struct bt_buf *lines, struct bt_buf *signed_names)
{
    size_t cap = req->nheaders + 2;
    struct chdr *h = bt_xcalloc(cap, sizeof *h);
    size_t n = 0;
    bool has_host = false;
    for (size_t i = 0; i < req->nheaders; i++) {
        const struct bt_header *src = &req->headers[i];
        if (!valid_header_name(src->name) || !src->value) {
            free_chdrs(h, n);
            return false;
        }
        h[n].name = lower_dup(src->name);
        h[n].value = canonical_value(src->value);
        h[n].order = n;
        has_host = has_host || strcmp(h[n].name, "host") == 0;
        n++;
    }
    if (!has_host) {
        free_chdrs(h, n);
        return false;
    }
    if (!find_header(req, "x-amz-date")) {
        h[n] = (struct chdr){.name = lower_dup("x-amz-date"), .value = bt_xstrdup(amz_date), .order = n};
        n++;
    }
    if (creds->session_token && *creds->session_token && !req->omit_session_token &&
        !find_header(req, "x-amz-security-token")) {
        h[n] = (struct chdr){.name = lower_dup("x-amz-security-token"), .value = canonical_value(creds->session_token), .order = n};
        n++;
    }
    qsort(h, n, sizeof *h, chdr_cmp);
    for (size_t i = 0; i < n; i++) {
        bool same_as_prev = i > 0 && strcmp(h[i].name, h[i - 1].name) == 0;
        if (same_as_prev) {
            bt_buf_printf(lines, ",%s", h[i].value);
            continue;
        }
        if (i > 0) {
            bt_buf_putc(lines, '\n');
            bt_buf_putc(signed_names, ';');
        }
        bt_buf_printf(lines, "%s:%s", h[i].name, h[i].value);
        bt_buf_puts(signed_names, h[i].name);
    }
    bt_buf_putc(lines, '\n');
    free_chdrs(h, n);
    return true;
}

/* kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request"). */
static bool signing_key(const struct bt_creds *creds, const char *date8, const char *region,
                        const char *service, unsigned char key[32])
{
    char k0[4 + sizeof creds->secret_key];
    int n = snprintf(k0, sizeof k0, "AWS4%s", creds->secret_key);
    unsigned char a[32], b[32];
    bool good = n > 4 && (size_t)n < sizeof k0 &&
                hmac256(k0, (size_t)n, date8, 8, a) &&
                hmac256(a, 32, region, strlen(region), b) &&
                hmac256(b, 32, service, strlen(service), a) &&
                hmac256(a, 32, "aws4_request", 12, key);
    OPENSSL_cleanse(k0, sizeof k0);
    OPENSSL_cleanse(a, sizeof a);
    OPENSSL_cleanse(b, sizeof b);
    return good;
}

void bt_sigv4_out_free(struct bt_sigv4_out *out)
{
    if (!out)
        return;
    free(out->canonical_request);
    free(out->string_to_sign);
    out->canonical_request = NULL;
    out->string_to_sign = NULL;
}

int bt_sigv4_sign(const struct bt_sigv4_req *req, const struct bt_creds *creds, struct bt_sigv4_out *out)
{
    if (!out)
        return -1;
    memset(out, 0, sizeof *out);
    if (!req || !creds || !req->method || !*req->method || strpbrk(req->method, " \t\r\n") ||
        !req->path || !valid_scope_part(req->region) || !valid_scope_part(req->service) ||
        !valid_scope_part(creds->access_key) || !creds->secret_key[0] ||
        (req->nheaders && !req->headers) || (req->body_len && !req->body))
        return -1;

    const char *sent_date = find_header(req, "x-amz-date");
    if (sent_date) {
        char trimmed[32];
        bt_strlcpy(trimmed, sent_date, sizeof trimmed);
        if (!valid_amz_date(bt_trim(trimmed)))
            return -1;
        bt_strlcpy(out->amz_date, trimmed, sizeof out->amz_date);
    } else {
        time_t t = (time_t)req->now;
        struct tm tm;
        if (!gmtime_r(&t, &tm) ||
            strftime(out->amz_date, sizeof out->amz_date, "%Y%m%dT%H%M%SZ", &tm) != 16)
            return -1;
    }
    char date8[9];
    memcpy(date8, out->amz_date, 8);
    date8[8] = '\0';

    struct bt_buf creq = {0}, hdrs = {0}, names = {0}, path = {0}, sts = {0};
    if (!canonical_headers(req, creds, out->amz_date, &hdrs, &names)) {
        bt_buf_free(&hdrs);
        bt_buf_free(&names);
        return -1;
    }
    if (req->normalize_path)
        normalize_path(&path, req->path);
    else
        bt_buf_puts(&path, *req->path ? req->path : "/");

    char payload_hash[65];
    bt_sigv4_sha256_hex(req->body, req->body_len, payload_hash);

    bt_buf_printf(&creq, "%s\n", req->method);
    uri_encode(&creq, path.buf, path.len, true);
    bt_buf_putc(&creq, '\n');
    canonical_query(&creq, req->query);
    bt_buf_putc(&creq, '\n');
    bt_buf_add(&creq, hdrs.buf, hdrs.len);
    bt_buf_printf(&creq, "\n%s\n%s", bt_buf_str(&names), payload_hash);

    char creq_hash[65];
    bt_sigv4_sha256_hex(creq.buf, creq.len, creq_hash);
    char scope[256];
    int sn = snprintf(scope, sizeof scope, "%s/%s/%s/aws4_request", date8, req->region, req->service);
    bt_buf_printf(&sts, SIGV4_ALGO "\n%s\n%s\n%s", out->amz_date, scope, creq_hash);

    unsigned char key[32], sig[32];
    bool good = sn > 0 && (size_t)sn < sizeof scope &&
                signing_key(creds, date8, req->region, req->service, key) &&
                hmac256(key, 32, sts.buf, sts.len, sig);
    OPENSSL_cleanse(key, sizeof key);
    if (good) {
        hex_encode(sig, 32, out->signature);
        int an = snprintf(out->authorization, sizeof out->authorization,
                          SIGV4_ALGO " Credential=%s/%s, SignedHeaders=%s, Signature=%s",
                          creds->access_key, scope, bt_buf_str(&names), out->signature);
        good = an > 0 && (size_t)an < sizeof out->authorization;
    }
    bt_buf_free(&hdrs);
    bt_buf_free(&names);
    bt_buf_free(&path);
    if (!good) {
        bt_buf_free(&creq);
        bt_buf_free(&sts);
        memset(out, 0, sizeof *out);
        return -1;
    }
    out->canonical_request = creq.buf;
    out->string_to_sign = sts.buf;
    return 0;
}
