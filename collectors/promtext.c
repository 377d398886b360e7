#include "collectors/promtext.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"

/* Open addressing over indices; idx1 = index + 1 so a zeroed slot is empty. */
struct bt_prom_slot {
    uint64_t h;
    int idx1;
};

void bt_prom_init(struct bt_prom_doc *d)
{
    memset(d, 0, sizeof *d);
}

static void free_labels(struct bt_prom_label *l, int n)
{
    for (int i = 0; i < n; i++) {
        free(l[i].name);
        free(l[i].value);
    }
    free(l);
}

void bt_prom_free(struct bt_prom_doc *d)
{
    for (int i = 0; i < d->nfamilies; i++) {
        free(d->families[i].name);
        free(d->families[i].help);
        free(d->families[i].unit);
    }
    for (int i = 0; i < d->nseries; i++) {
        free(d->series[i].name);
        free_labels(d->series[i].labels, d->series[i].nlabels);
    }
    free(d->families);
    free(d->series);
    free(d->fam_idx);
    free(d->ser_idx);
    bt_prom_init(d);
}

enum bt_prom_format bt_prom_format_of(const char *ct)
{
    return ct && strstr(ct, "application/openmetrics-text") ? BT_PROM_OPENMETRICS : BT_PROM_TEXT;
}

static const char *const type_names[] = {"untyped", "counter", "gauge", "histogram", "summary",
                                         "gaugehistogram", "stateset", "info"};

const char *bt_prom_type_name(enum bt_prom_type t)
{
    return (unsigned)t < BT_ARRAY_LEN(type_names) ? type_names[t] : "?";
}

const char *bt_prom_label(const struct bt_prom_series *s, const char *name)
{
    for (int i = 0; i < s->nlabels; i++)
        if (strcmp(s->labels[i].name, name) == 0)
            return s->labels[i].value;
    return NULL;
}

enum bt_prom_type bt_prom_series_type(const struct bt_prom_doc *d, const struct bt_prom_series *s)
{
    return s->family >= 0 && s->family < d->nfamilies ? d->families[s->family].type
                                                      : BT_PROM_UNTYPED;
}

/* ---- hashing ---------------------------------------------------------- */

static uint64_t fnv(const char *s, uint64_t h)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

#define FNV_BASIS 14695981039346656037ULL

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

/* Label order does not make a different series, so label hashes are summed. */
static uint64_t series_hash(const char *name, const struct bt_prom_label *l, int n)
{
    uint64_t h = mix(fnv(name, FNV_BASIS));
    for (int i = 0; i < n; i++)
        h += mix(fnv(l[i].value, fnv("\xff", fnv(l[i].name, FNV_BASIS))));
    return h;
}

static bool same_series(const struct bt_prom_series *a, const char *name,
                        const struct bt_prom_label *l, int n)
{
    if (a->nlabels != n || strcmp(a->name, name) != 0)
        return false;
    for (int i = 0; i < n; i++) {
        const char *v = bt_prom_label(a, l[i].name);
        if (!v || strcmp(v, l[i].value) != 0)
            return false;
    }
    return true;
}

static void slots_grow(struct bt_prom_slot **tab, size_t *cap, int n)
{
    if ((size_t)(n + 1) * 2 <= *cap)
        return;
    size_t ncap = *cap ? *cap * 2 : 64;
    struct bt_prom_slot *nt = bt_xcalloc(ncap, sizeof *nt);
    for (size_t i = 0; i < *cap; i++) {
        if (!(*tab)[i].idx1)
            continue;
        size_t j = (*tab)[i].h & (ncap - 1);
        while (nt[j].idx1)
            j = (j + 1) & (ncap - 1);
        nt[j] = (*tab)[i];
    }
    free(*tab);
    *tab = nt;
    *cap = ncap;
}

static void slots_put(struct bt_prom_slot *tab, size_t cap, uint64_t h, int idx)
{
    size_t j = h & (cap - 1);
    while (tab[j].idx1)
        j = (j + 1) & (cap - 1);
    tab[j].h = h;
    tab[j].idx1 = idx + 1;
}

static uint64_t fnv_n(const char *s, size_t n)
{
    uint64_t h = FNV_BASIS;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static int family_find(const struct bt_prom_doc *d, const char *name, size_t len)
{
    if (!d->fam_cap)
        return -1;
    uint64_t h = fnv_n(name, len);
    for (size_t j = h & (d->fam_cap - 1); d->fam_idx[j].idx1; j = (j + 1) & (d->fam_cap - 1)) {
        const char *fn = d->families[d->fam_idx[j].idx1 - 1].name;
        if (d->fam_idx[j].h == h && strncmp(fn, name, len) == 0 && fn[len] == '\0')
            return d->fam_idx[j].idx1 - 1;
    }
    return -1;
}

static int family_add(struct bt_prom_doc *d, const char *name, int line)
{
    if (d->nfamilies == d->families_cap) {
        d->families_cap = d->families_cap ? d->families_cap * 2 : 16;
        d->families = bt_xrealloc(d->families, (size_t)d->families_cap * sizeof *d->families);
    }
    int i = d->nfamilies++;
    d->families[i] = (struct bt_prom_family){.name = bt_xstrdup(name), .line = line};
    slots_grow(&d->fam_idx, &d->fam_cap, d->nfamilies);
    slots_put(d->fam_idx, d->fam_cap, fnv_n(name, strlen(name)), i);
    return i;
}

static int series_find(const struct bt_prom_doc *d, uint64_t h, const char *name,
                       const struct bt_prom_label *l, int n)
{
    if (!d->ser_cap)
        return -1;
    for (size_t j = h & (d->ser_cap - 1); d->ser_idx[j].idx1; j = (j + 1) & (d->ser_cap - 1))
        if (d->ser_idx[j].h == h && same_series(&d->series[d->ser_idx[j].idx1 - 1], name, l, n))
            return d->ser_idx[j].idx1 - 1;
    return -1;
}

/* Takes ownership of name and labels. */
static int series_add(struct bt_prom_doc *d, char *name, struct bt_prom_label *l, int n,
                      uint64_t h)
{
    if (d->nseries == d->series_cap) {
        d->series_cap = d->series_cap ? d->series_cap * 2 : 64;
        d->series = bt_xrealloc(d->series, (size_t)d->series_cap * sizeof *d->series);
    }
    int i = d->nseries++;
    d->series[i] = (struct bt_prom_series){.name = name, .family = -1, .labels = l, .nlabels = n};
    slots_grow(&d->ser_idx, &d->ser_cap, d->nseries);
    slots_put(d->ser_idx, d->ser_cap, h, i);
    return i;
}

/* ---- the text parser --------------------------------------------------- */

struct parser {
    struct bt_prom_doc *d;
    enum bt_prom_format fmt;
    int line;
    const char *p, *end;     /* the rest of the current line */
    char *err;
    size_t errlen;
};

static bool fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(struct parser *ps, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(ps->err, ps->errlen, "line %d: %s", ps->line, msg);
    return false;
}

static bool is_name_start(int c)
{
    return isalpha(c) || c == '_' || c == ':';
}

static bool is_name_char(int c)
{
    return isalnum(c) || c == '_' || c == ':';
}

static void skip_blanks(struct parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t'))
        ps->p++;
}

/* Names are ASCII; report the byte found so garbage gets a readable message. */
static bool what_found(struct parser *ps, const char *expected)
{
    if (ps->p >= ps->end)
        return fail(ps, "expected %s, found end of line", expected);
    unsigned char c = (unsigned char)*ps->p;
    if (isprint(c))
        return fail(ps, "expected %s, found '%c'", expected, c);
    return fail(ps, "expected %s, found byte 0x%02x", expected, c);
}

static bool read_name(struct parser *ps, bool metric, const char **s, size_t *n)
{
    const char *st = ps->p;
    if (ps->p >= ps->end || !(metric ? is_name_start((unsigned char)*ps->p)
                                     : (isalpha((unsigned char)*ps->p) || *ps->p == '_')))
        return what_found(ps, metric ? "a metric name" : "a label name");
    ps->p++;
    while (ps->p < ps->end &&
           (metric ? is_name_char((unsigned char)*ps->p)
                   : (isalnum((unsigned char)*ps->p) || *ps->p == '_')))
        ps->p++;
    *s = st;
    *n = (size_t)(ps->p - st);
    return true;
}

static char *dup_n(const char *s, size_t n)
{
    char *r = bt_xmalloc(n + 1);
    memcpy(r, s, n);
    r[n] = '\0';
    return r;
}

/* Checks UTF-8 well-formedness (no overlongs or surrogates). */
static bool utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        unsigned min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            k = 1, min = 0x80, c &= 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            k = 2, min = 0x800, c &= 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            k = 3, min = 0x10000, c &= 0x07;
        } else {
            return false;
        }
        for (size_t j = 1; j <= k; j++) {
            if (i + j >= n || (s[i + j] & 0xc0) != 0x80)
                return false;
            c = (c << 6) | (s[i + j] & 0x3f);
        }
        if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
            return false;
        i += k + 1;
    }
    return true;
}

static bool read_label_value(struct parser *ps, char **out)
{
    if (ps->p >= ps->end || *ps->p != '"')
        return what_found(ps, "'\"' to open a label value");
    ps->p++;
    struct bt_buf b = {0};
    bt_buf_reserve(&b, 16);
    while (ps->p < ps->end && *ps->p != '"') {
        char c = *ps->p++;
        if (c == '\\') {
            if (ps->p >= ps->end)
                break;
            char e = *ps->p++;
            if (e == '\\' || e == '"') {
                bt_buf_putc(&b, e);
            } else if (e == 'n') {
                bt_buf_putc(&b, '\n');
            } else {
                bt_buf_free(&b);
                if (isprint((unsigned char)e))
                    return fail(ps, "bad escape \\%c in label value", e);
                return fail(ps, "bad escape \\ followed by byte 0x%02x in label value",
                            (unsigned char)e);
            }
        } else {
            bt_buf_putc(&b, c);
        }
    }
    if (ps->p >= ps->end) {
        bt_buf_free(&b);
        return fail(ps, "unterminated label value");
    }
    ps->p++;
    b.buf[b.len] = '\0'; /* an empty value added nothing, so terminate here */
    if (!utf8_valid((const unsigned char *)b.buf, b.len)) {
        bt_buf_free(&b);
        return fail(ps, "invalid UTF-8 in label value");
    }
    *out = b.buf;
    return true;
}

static bool ieq(const char *a, size_t n, const char *b)
{
    return strlen(b) == n && strncasecmp(a, b, n) == 0;
}

/* A sample value: decimal float, or [+-]Inf/Infinity, NaN (any case). */
static bool parse_value(const char *s, size_t n, bool allow_special, double *out)
{
    const char *t = s;
    size_t m = n;
    double sign = 1;
    if (m && (*t == '+' || *t == '-')) {
        sign = *t == '-' ? -1 : 1;
        t++, m--;
    }
    if (ieq(t, m, "inf") || ieq(t, m, "infinity")) {
        *out = sign * INFINITY;
        return allow_special;
    }
    if (ieq(t, m, "nan")) {
        *out = NAN;
        return allow_special;
    }
    if (n == 0 || n > 64)
        return false;
    bool digit = false;
    for (size_t i = 0; i < n; i++) {
        if (isdigit((unsigned char)s[i]))
            digit = true;
        else if (!strchr(".eE+-", s[i]))
            return false;
    }
    if (!digit)
        return false;
    char tmp[72];
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *e;
    errno = 0;
    double v = strtod(tmp, &e);
    if (*e || (errno == ERANGE && isinf(v)))
        return false;
    *out = v;
    return true;
}

static bool next_token(struct parser *ps, const char **s, size_t *n)
{
    skip_blanks(ps);
    *s = ps->p;
    while (ps->p < ps->end && *ps->p != ' ' && *ps->p != '\t')
        ps->p++;
    *n = (size_t)(ps->p - *s);
    return *n > 0;
}

/* Families a sample name can belong to: the name itself, or a base name
 * plus a suffix allowed for the family's type. */
static bool suffix_allowed(enum bt_prom_type t, const char *suffix)
{
    static const struct {
        enum bt_prom_type t;
        const char *s;
    } ok[] = {
        {BT_PROM_COUNTER, "_total"},          {BT_PROM_COUNTER, "_created"},
        {BT_PROM_HISTOGRAM, "_bucket"},       {BT_PROM_HISTOGRAM, "_sum"},
        {BT_PROM_HISTOGRAM, "_count"},        {BT_PROM_HISTOGRAM, "_created"},
        {BT_PROM_GAUGE_HISTOGRAM, "_bucket"}, {BT_PROM_GAUGE_HISTOGRAM, "_gsum"},
        {BT_PROM_GAUGE_HISTOGRAM, "_gcount"}, {BT_PROM_SUMMARY, "_sum"},
        {BT_PROM_SUMMARY, "_count"},          {BT_PROM_SUMMARY, "_created"},
        {BT_PROM_INFO, "_info"},
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(ok); i++)
        if (ok[i].t == t && strcmp(ok[i].s, suffix) == 0)
            return true;
    return false;
}

static int family_of_sample(const struct bt_prom_doc *d, const char *name, const char **suffix)
{
    static const char *const suffixes[] = {"_total", "_created", "_bucket", "_sum", "_count",
                                           "_gsum", "_gcount", "_info"};
    size_t n = strlen(name);
    *suffix = "";
    int f = family_find(d, name, n);
    if (f >= 0)
        return f;
    for (size_t i = 0; i < BT_ARRAY_LEN(suffixes); i++) {
        size_t sl = strlen(suffixes[i]);
        if (n <= sl || strcmp(name + n - sl, suffixes[i]) != 0)
            continue;
        f = family_find(d, name, n - sl);
        if (f >= 0 && suffix_allowed(d->families[f].type, suffixes[i])) {
            *suffix = suffixes[i];
            return f;
        }
    }
    return -1;
}

static bool parse_sample(struct parser *ps)
{
    const char *ns;
    size_t nn;
    if (!read_name(ps, true, &ns, &nn))
        return false;
    struct bt_prom_label *labels = NULL;
    int nl = 0;
    char *name = NULL;
    skip_blanks(ps);
    if (ps->p < ps->end && *ps->p == '{') {
        ps->p++;
        labels = bt_xcalloc(BT_PROM_MAX_LABELS, sizeof *labels);
        for (;;) {
            skip_blanks(ps);
            if (ps->p < ps->end && *ps->p == '}') {
                if (nl && ps->fmt == BT_PROM_OPENMETRICS && ps->p[-1] == ',') {
                    fail(ps, "trailing comma in label set");
                    goto bad;
                }
                ps->p++;
                break;
            }
            if (nl == BT_PROM_MAX_LABELS) {
                fail(ps, "more than %d labels", BT_PROM_MAX_LABELS);
                goto bad;
            }
            const char *ls;
            size_t ln;
            if (!read_name(ps, false, &ls, &ln))
                goto bad;
            for (int i = 0; i < nl; i++) {
                if (strlen(labels[i].name) == ln && memcmp(labels[i].name, ls, ln) == 0) {
                    fail(ps, "duplicate label %.*s", (int)(ln > 64 ? 64 : ln), ls);
                    goto bad;
                }
            }
            skip_blanks(ps);
            if (ps->p >= ps->end || *ps->p != '=') {
                what_found(ps, "'=' after a label name");
                goto bad;
            }
            ps->p++;
            skip_blanks(ps);
            char *val = NULL;
            if (!read_label_value(ps, &val))
                goto bad;
            labels[nl].name = dup_n(ls, ln);
            labels[nl].value = val;
            nl++;
            skip_blanks(ps);
            if (ps->p < ps->end && *ps->p == ',') {
                ps->p++;
                continue;
            }
            if (ps->p < ps->end && *ps->p == '}')
                continue;
            what_found(ps, "',' or '}' in a label set");
            goto bad;
        }
    }
    name = dup_n(ns, nn);
    const char *vs;
    size_t vn;
    if (!next_token(ps, &vs, &vn)) {
        fail(ps, "missing value for %s", name);
        goto bad;
    }
    double value;
    if (!parse_value(vs, vn, true, &value)) {
        fail(ps, "bad value \"%.*s\" for %s", (int)(vn > 40 ? 40 : vn), vs, name);
        goto bad;
    }
    bool has_time = false;
    double time = 0;
    const char *ts;
    size_t tn;
    if (next_token(ps, &ts, &tn) && *ts != '#') {
        if (ps->fmt == BT_PROM_TEXT) {
            bool digits = tn > (*ts == '-' ? 1u : 0u) && tn <= 19;
            for (size_t i = *ts == '-' ? 1 : 0; i < tn && digits; i++)
                digits = isdigit((unsigned char)ts[i]);
            if (!digits) {
                fail(ps, "bad timestamp \"%.*s\" (integer milliseconds)",
                     (int)(tn > 40 ? 40 : tn), ts);
                goto bad;
            }
            char tmp[24];
            memcpy(tmp, ts, tn);
            tmp[tn] = '\0';
            time = (double)strtoll(tmp, NULL, 10) / 1000.0;
        } else if (!parse_value(ts, tn, false, &time)) {
            fail(ps, "bad timestamp \"%.*s\" (seconds)", (int)(tn > 40 ? 40 : tn), ts);
            goto bad;
        }
        has_time = true;
        next_token(ps, &ts, &tn);
    }
    if (tn) {
        /* OpenMetrics exemplar: " # {labels} value [timestamp]"; skipped */
        if (ps->fmt != BT_PROM_OPENMETRICS || tn != 1 || *ts != '#') {
            fail(ps, "unexpected \"%.*s\" after the value of %s", (int)(tn > 40 ? 40 : tn), ts,
                 name);
            goto bad;
        }
        skip_blanks(ps);
        if (ps->p >= ps->end || *ps->p != '{') {
            fail(ps, "exemplar must start with '{'");
            goto bad;
        }
    }

    const char *suffix;
    int fam = family_of_sample(ps->d, name, &suffix);
    enum bt_prom_type type = fam >= 0 ? ps->d->families[fam].type : BT_PROM_UNTYPED;
    if ((type == BT_PROM_HISTOGRAM || type == BT_PROM_GAUGE_HISTOGRAM) &&
        strcmp(suffix, "_bucket") == 0) {
        const char *le = NULL;
        for (int i = 0; i < nl; i++)
            if (strcmp(labels[i].name, "le") == 0)
                le = labels[i].value;
        double lev;
        if (!le) {
            fail(ps, "histogram bucket %s without an le label", name);
            goto bad;
        }
        if (!parse_value(le, strlen(le), true, &lev) || isnan(lev)) {
            fail(ps, "bad le value \"%.40s\" in %s", le, name);
            goto bad;
        }
    }
    if (strcmp(suffix, "_created") == 0) {
        /* creation time of a counter/histogram: metadata, not a value */
        free(name);
        free_labels(labels, nl);
        return true;
    }
    uint64_t h = series_hash(name, labels, nl);
    int dup = series_find(ps->d, h, name, labels, nl);
    if (dup >= 0) {
        if (ps->fmt == BT_PROM_OPENMETRICS) {
            fail(ps, "duplicate series %s (first on line %d)", name, ps->d->series[dup].line);
            goto bad;
        }
        struct bt_prom_series *o = &ps->d->series[dup];
        if (!ps->d->duplicates)
            snprintf(ps->d->warning, sizeof ps->d->warning,
                     "line %d: duplicate series %.64s (first on line %d); the later value is used",
                     ps->line, name, o->line);
        ps->d->duplicates++;
        o->value = value;
        o->has_time = has_time;
        o->time = time;
        o->line = ps->line;
        free(name);
        free_labels(labels, nl);
        return true;
    }
    if (ps->d->nseries >= BT_PROM_MAX_SERIES) {
        fail(ps, "more than %d series", BT_PROM_MAX_SERIES);
        goto bad;
    }
    if (nl == 0) {
        free(labels);
        labels = NULL;
    }
    int i = series_add(ps->d, name, labels, nl, h);
    struct bt_prom_series *s = &ps->d->series[i];
    s->family = fam;
    s->value = value;
    s->has_time = has_time;
    s->time = time;
    s->line = ps->line;
    return true;
bad:
    free(name);
    free_labels(labels, nl);
    return false;
}

static char *unescape_help(const char *s, size_t n, enum bt_prom_format fmt)
{
    struct bt_buf b = {0};
    bt_buf_reserve(&b, n);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n) {
            char e = s[i + 1];
            if (e == 'n' || e == '\\' || (e == '"' && fmt == BT_PROM_OPENMETRICS)) {
                bt_buf_putc(&b, e == 'n' ? '\n' : e);
                i++;
                continue;
            }
        }
        bt_buf_putc(&b, s[i]);
    }
    b.buf[b.len] = '\0'; /* empty HELP text */
    return b.buf;
}

static int family_get(struct parser *ps, const char *name, size_t n)
{
    int f = family_find(ps->d, name, n);
    if (f >= 0)
        return f;
    char *tmp = dup_n(name, n);
    f = family_add(ps->d, tmp, ps->line);
    free(tmp);
    return f;
}

/* "# HELP", "# TYPE", "# UNIT", "# EOF" or a comment. Sets *eof on # EOF. */
static bool parse_comment(struct parser *ps, bool *eof)
{
    ps->p++;
    if (ps->p >= ps->end || (*ps->p != ' ' && *ps->p != '\t'))
        return true;
    skip_blanks(ps);
    const char *kw;
    size_t kn;
    next_token(ps, &kw, &kn);
    bool om = ps->fmt == BT_PROM_OPENMETRICS;
    if (om && kn == 3 && memcmp(kw, "EOF", 3) == 0) {
        skip_blanks(ps);
        if (ps->p != ps->end)
            return fail(ps, "unexpected text after # EOF");
        *eof = true;
        return true;
    }
    enum { HELP, TYPE, UNIT } what;
    if (kn == 4 && memcmp(kw, "HELP", 4) == 0)
        what = HELP;
    else if (kn == 4 && memcmp(kw, "TYPE", 4) == 0)
        what = TYPE;
    else if (om && kn == 4 && memcmp(kw, "UNIT", 4) == 0)
        what = UNIT;
    else
        return true; /* a plain comment */
    skip_blanks(ps);
    const char *ns;
    size_t nn;
    if (!read_name(ps, true, &ns, &nn))
        return false;
    if (ps->p < ps->end && *ps->p != ' ' && *ps->p != '\t')
        return what_found(ps, "a blank after the metric name");
    skip_blanks(ps);
    int f = family_get(ps, ns, nn);
    struct bt_prom_family *fam = &ps->d->families[f];
    if (what == HELP) {
        if (fam->help)
            return fail(ps, "second HELP for %s", fam->name);
        fam->help = unescape_help(ps->p, (size_t)(ps->end - ps->p), ps->fmt);
        return true;
    }
    const char *ts;
    size_t tn;
    next_token(ps, &ts, &tn);
    if (what == UNIT) {
        if (fam->unit)
            return fail(ps, "second UNIT for %s", fam->name);
        fam->unit = dup_n(ts, tn);
        return true;
    }
    if (fam->has_type)
        return fail(ps, "second TYPE for %s", fam->name);
    static const struct {
        const char *name;
        enum bt_prom_type t;
        bool om_only, text_only;
    } types[] = {
        {"counter", BT_PROM_COUNTER, false, false},
        {"gauge", BT_PROM_GAUGE, false, false},
        {"histogram", BT_PROM_HISTOGRAM, false, false},
        {"summary", BT_PROM_SUMMARY, false, false},
        {"untyped", BT_PROM_UNTYPED, false, true},
        {"unknown", BT_PROM_UNTYPED, true, false},
        {"gaugehistogram", BT_PROM_GAUGE_HISTOGRAM, true, false},
        {"stateset", BT_PROM_STATESET, true, false},
        {"info", BT_PROM_INFO, true, false},
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(types); i++) {
        if (!ieq(ts, tn, types[i].name) || (om && types[i].text_only) ||
            (!om && types[i].om_only))
            continue;
        fam->type = types[i].t;
        fam->has_type = true;
        skip_blanks(ps);
        if (ps->p != ps->end)
            return fail(ps, "unexpected text after TYPE %s", types[i].name);
        return true;
    }
    return fail(ps, "unknown metric type \"%.*s\" for %s", (int)(tn > 32 ? 32 : tn), ts,
                fam->name);
}

bool bt_prom_parse(struct bt_prom_doc *d, const char *text, size_t len, enum bt_prom_format fmt,
                   char *err, size_t errlen)
{
    struct parser ps = {.d = d, .fmt = fmt, .err = err, .errlen = errlen};
    const char *p = text, *end = text + len;
    bool eof = false;
    bool ok = true;
    if (errlen)
        err[0] = '\0';
    while (p < end && ok) {
        ps.line++;
        if (eof) {
            ok = fail(&ps, "content after # EOF");
            break;
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le - p > BT_PROM_MAX_LINE) {
            ok = fail(&ps, "line longer than %d bytes", BT_PROM_MAX_LINE);
            break;
        }
        if (memchr(p, '\0', (size_t)(le - p))) {
            ok = fail(&ps, "NUL byte in input");
            break;
        }
        ps.p = p;
        ps.end = le;
        if (ps.end > ps.p && ps.end[-1] == '\r')
            ps.end--;
        p = nl ? nl + 1 : end;
        skip_blanks(&ps);
        if (ps.p == ps.end)
            continue; /* blank line */
        if (*ps.p == '#')
            ok = parse_comment(&ps, &eof);
        else
            ok = parse_sample(&ps);
    }
    if (ok && fmt == BT_PROM_OPENMETRICS && !eof) {
        ps.line = ps.line ? ps.line : 1;
        ok = fail(&ps, "truncated: OpenMetrics input must end with # EOF");
    }
    if (!ok)
        bt_prom_free(d);
    return ok;
}

/* ---- JSON forms -------------------------------------------------------- */

static bool jfail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool jfail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return false;
}

static cJSON *json_parse(const char *text, size_t len, char *err, size_t errlen)
{
    if (errlen)
        err[0] = '\0';
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        int line = 1;
        if (at && at >= text && at <= text + len)
            for (const char *q = text; q < at; q++)
                line += *q == '\n';
        jfail(err, errlen, "line %d: JSON syntax error", line);
    }
    return root;
}

static bool doc_full(struct bt_prom_doc *d, char *err, size_t errlen)
{
    if (d->nseries < BT_PROM_MAX_SERIES)
        return false;
    jfail(err, errlen, "more than %d series", BT_PROM_MAX_SERIES);
    return true;
}

/* Adds name{route=..[,le=..]} with value; the family is created on first use. */
static void json_add(struct bt_prom_doc *d, const char *family, enum bt_prom_type type,
                     const char *name, const char *route, const char *le, double v)
{
    int f = family_find(d, family, strlen(family));
    if (f < 0) {
        f = family_add(d, family, 0);
        d->families[f].type = type;
        d->families[f].has_type = true;
    }
    int nl = le ? 2 : 1;
    struct bt_prom_label *l = bt_xcalloc((size_t)nl, sizeof *l);
    l[0] = (struct bt_prom_label){bt_xstrdup("route"), bt_xstrdup(route)};
    if (le)
        l[1] = (struct bt_prom_label){bt_xstrdup("le"), bt_xstrdup(le)};
    uint64_t h = series_hash(name, l, nl);
    int i = series_add(d, bt_xstrdup(name), l, nl, h);
    d->series[i].family = f;
    d->series[i].value = v;
}

static bool json_histogram(struct bt_prom_doc *d, const char *route, const cJSON *m, char *err,
                           size_t errlen)
{
    const cJSON *buckets = cJSON_GetObjectItemCaseSensitive(m, "buckets");
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(m, "sum");
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(m, "count");
    if (!cJSON_IsObject(buckets))
        return jfail(err, errlen, "routes.%s.%s: a histogram needs a \"buckets\" object", route,
                     m->string);
    char name[256];
    bool inf = false;
    double inf_count = 0;
    const cJSON *b;
    cJSON_ArrayForEach(b, buckets)
    {
        double le;
        if (!parse_value(b->string, strlen(b->string), true, &le) || isnan(le))
            return jfail(err, errlen, "routes.%s.%s.buckets: bad le \"%.40s\"", route, m->string,
                         b->string);
        if (!cJSON_IsNumber(b))
            return jfail(err, errlen, "routes.%s.%s.buckets.%.40s: expected a number", route,
                         m->string, b->string);
        if (doc_full(d, err, errlen))
            return false;
        if (isinf(le) && le > 0) {
            inf = true;
            inf_count = b->valuedouble;
        }
        snprintf(name, sizeof name, "%s_bucket", m->string);
        json_add(d, m->string, BT_PROM_HISTOGRAM, name, route, b->string, b->valuedouble);
    }
    if (!inf)
        return jfail(err, errlen, "routes.%s.%s.buckets: no \"+Inf\" bucket", route, m->string);
    if (sum && !cJSON_IsNumber(sum))
        return jfail(err, errlen, "routes.%s.%s.sum: expected a number", route, m->string);
    if (count && !cJSON_IsNumber(count))
        return jfail(err, errlen, "routes.%s.%s.count: expected a number", route, m->string);
    if (doc_full(d, err, errlen))
        return false;
    if (sum) {
        snprintf(name, sizeof name, "%s_sum", m->string);
        json_add(d, m->string, BT_PROM_HISTOGRAM, name, route, NULL, sum->valuedouble);
    }
    snprintf(name, sizeof name, "%s_count", m->string);
    json_add(d, m->string, BT_PROM_HISTOGRAM, name, route, NULL,
             count ? count->valuedouble : inf_count);
    return true;
}

static bool valid_metric_name(const char *s)
{
    if (!is_name_start((unsigned char)*s) || strlen(s) > 200)
        return false;
    for (s++; *s; s++)
        if (!is_name_char((unsigned char)*s))
            return false;
    return true;
}

bool bt_prom_parse_json(struct bt_prom_doc *d, const char *text, size_t len, char *err,
                        size_t errlen)
{
    cJSON *root = json_parse(text, len, err, errlen);
    if (!root)
        return false;
    bool ok = true;
    const cJSON *routes = cJSON_GetObjectItemCaseSensitive(root, "routes");
    if (!cJSON_IsObject(routes)) {
        ok = jfail(err, errlen, "expected {\"routes\":{\"<route>\":{...}}}");
        goto out;
    }
    const cJSON *r;
    cJSON_ArrayForEach(r, routes)
    {
        if (!cJSON_IsObject(r) || strlen(r->string) > 200) {
            ok = jfail(err, errlen, "routes.%.64s: expected an object of metrics", r->string);
            goto out;
        }
        const cJSON *m;
        cJSON_ArrayForEach(m, r)
        {
            if (!valid_metric_name(m->string)) {
                ok = jfail(err, errlen, "routes.%s: bad metric name \"%.64s\"", r->string,
                           m->string);
                goto out;
            }
            if (cJSON_IsNull(m))
                continue; /* not measured yet */
            if (cJSON_IsObject(m)) {
                ok = json_histogram(d, r->string, m, err, errlen);
                if (!ok)
                    goto out;
                continue;
            }
            if (!cJSON_IsNumber(m)) {
                ok = jfail(err, errlen, "routes.%s.%s: expected a number or a histogram object",
                           r->string, m->string);
                goto out;
            }
            if (doc_full(d, err, errlen)) {
                ok = false;
                goto out;
            }
            size_t n = strlen(m->string);
            bool counter = n > 6 && strcmp(m->string + n - 6, "_total") == 0;
            json_add(d, m->string, counter ? BT_PROM_COUNTER : BT_PROM_GAUGE, m->string,
                     r->string, NULL, m->valuedouble);
        }
    }
out:
    cJSON_Delete(root);
    if (!ok)
        bt_prom_free(d);
    return ok;
}

/* [ <unix time>, "<value>" ] as the Prometheus API writes a sample. */
static bool api_sample(const cJSON *v, double *t, double *val)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2)
        return false;
    const cJSON *a = cJSON_GetArrayItem(v, 0), *b = cJSON_GetArrayItem(v, 1);
    if (!cJSON_IsNumber(a) || !cJSON_IsString(b))
        return false;
    *t = a->valuedouble;
    return parse_value(b->valuestring, strlen(b->valuestring), true, val);
}

bool bt_prom_parse_api(struct bt_prom_doc *d, const char *name, const char *text, size_t len,
                       char *err, size_t errlen)
{
    cJSON *root = json_parse(text, len, err, errlen);
    if (!root)
        return false;
    bool ok = true;
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(root, "status");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(root, "data");
    if (cJSON_IsString(status) && strcmp(status->valuestring, "error") == 0) {
        const cJSON *et = cJSON_GetObjectItemCaseSensitive(root, "errorType");
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
        ok = jfail(err, errlen, "query failed: %.40s: %.160s",
                   cJSON_IsString(et) ? et->valuestring : "error",
                   cJSON_IsString(e) ? e->valuestring : "(no message)");
        goto out;
    }
    if (!cJSON_IsString(status) || strcmp(status->valuestring, "success") != 0 ||
        !cJSON_IsObject(data)) {
        ok = jfail(err, errlen, "not a Prometheus API answer (no status \"success\" and data)");
        goto out;
    }
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(data, "resultType");
    const cJSON *result = cJSON_GetObjectItemCaseSensitive(data, "result");
    const char *rts = cJSON_IsString(rt) ? rt->valuestring : "";
    double t, v;
    if (strcmp(rts, "scalar") == 0) {
        if (!api_sample(result, &t, &v)) {
            ok = jfail(err, errlen, "bad scalar result");
            goto out;
        }
        if (doc_full(d, err, errlen)) {
            ok = false;
            goto out;
        }
        int i = series_add(d, bt_xstrdup(name), NULL, 0, series_hash(name, NULL, 0));
        d->series[i].value = v;
        d->series[i].has_time = true;
        d->series[i].time = t;
        goto out;
    }
    bool matrix = strcmp(rts, "matrix") == 0;
    if ((!matrix && strcmp(rts, "vector") != 0) || !cJSON_IsArray(result)) {
        ok = jfail(err, errlen, "resultType \"%.20s\" is not a vector or a matrix", rts);
        goto out;
    }
    const cJSON *e;
    int k = 0;
    cJSON_ArrayForEach(e, result)
    {
        const cJSON *metric = cJSON_GetObjectItemCaseSensitive(e, "metric");
        const cJSON *values = cJSON_GetObjectItemCaseSensitive(e, matrix ? "values" : "value");
        if ((matrix ? !cJSON_IsArray(values) : !api_sample(values, &t, &v)) ||
            (metric && !cJSON_IsObject(metric))) {
            ok = jfail(err, errlen, matrix ? "result[%d]: expected {\"metric\":{...},\"values\":[[t,\"v\"],...]}"
                                           : "result[%d]: expected {\"metric\":{...},\"value\":[t,\"v\"]}",
                       k);
            goto out;
        }
        int nl = cJSON_GetArraySize(metric);
        if (nl > BT_PROM_MAX_LABELS) {
            ok = jfail(err, errlen, "result[%d]: more than %d labels", k, BT_PROM_MAX_LABELS);
            goto out;
        }
        /* a matrix: one series per point, each with its time */
        const cJSON *pt = matrix ? values->child : NULL;
        do {
            if (matrix && !api_sample(pt, &t, &v)) {
                ok = jfail(err, errlen, "result[%d]: a point is not [t,\"v\"]", k);
                goto out;
            }
            if (doc_full(d, err, errlen)) {
                ok = false;
                goto out;
            }
            struct bt_prom_label *l = nl ? bt_xcalloc((size_t)nl, sizeof *l) : NULL;
            int j = 0;
            const char *sname = name;
            const cJSON *lab;
            cJSON_ArrayForEach(lab, metric)
            {
                const char *lv = cJSON_IsString(lab) ? lab->valuestring : "";
                l[j].name = bt_xstrdup(lab->string);
                l[j].value = bt_xstrdup(lv);
                if (!name && !strcmp(lab->string, "__name__"))
                    sname = l[j].value;
                j++;
            }
            if (!sname)
                sname = "";
            int i = series_add(d, bt_xstrdup(sname), l, nl, series_hash(sname, l, nl));
            d->series[i].value = v;
            d->series[i].has_time = true;
            d->series[i].time = t;
            pt = pt ? pt->next : NULL;
        } while (pt);
        k++;
    }
out:
    cJSON_Delete(root);
    return ok;
}

/* ---- histogram quantile ------------------------------------------------ */

static int bucket_cmp(const void *a, const void *b)
{
    double x = ((const struct bt_prom_bucket *)a)->le, y = ((const struct bt_prom_bucket *)b)->le;
    return x < y ? -1 : x > y;
}

double bt_prom_quantile(double q, struct bt_prom_bucket *b, size_t n)
{
    if (isnan(q))
        return NAN;
    if (q < 0)
        return -INFINITY;
    if (q > 1)
        return INFINITY;
    if (n < 2)
        return NAN;
    qsort(b, n, sizeof *b, bucket_cmp);
    if (!(isinf(b[n - 1].le) && b[n - 1].le > 0))
        return NAN;
    /* as Prometheus: merge equal bounds, and force counts to be monotonic */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && b[m - 1].le == b[i].le) {
            b[m - 1].count += b[i].count;
            continue;
        }
        b[m++] = b[i];
    }
    for (size_t i = 1; i < m; i++)
        if (b[i].count < b[i - 1].count)
            b[i].count = b[i - 1].count;
    if (m < 2)
        return NAN;
    double total = b[m - 1].count;
    if (!(total > 0))
        return NAN;
    double rank = q * total;
    size_t k = 0;
    while (k < m - 1 && b[k].count < rank)
        k++;
    if (k == m - 1)
        return b[m - 2].le;
    if (k == 0 && b[0].le <= 0)
        return b[0].le;
    double start = 0, end = b[k].le, count = b[k].count;
    if (k > 0) {
        start = b[k - 1].le;
        count -= b[k - 1].count;
        rank -= b[k - 1].count;
    }
    if (count <= 0)
        return start;
    return start + (end - start) * (rank / count);
}
