/* Prometheus text 0.0.4 and OpenMetrics 1.0 (bt_prom_parse). */
#include "collectors/prom_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"

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
    if (ps->p >= ps->end || !(metric ? bt_promdoc_name_start((unsigned char)*ps->p)
                                     : (isalpha((unsigned char)*ps->p) || *ps->p == '_')))
        return what_found(ps, metric ? "a metric name" : "a label name");
    ps->p++;
    while (ps->p < ps->end &&
           (metric ? bt_promdoc_name_char((unsigned char)*ps->p)
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
    int f = bt_promdoc_family_find(d, name, n);
    if (f >= 0)
        return f;
    for (size_t i = 0; i < BT_ARRAY_LEN(suffixes); i++) {
        size_t sl = strlen(suffixes[i]);
        if (n <= sl || strcmp(name + n - sl, suffixes[i]) != 0)
            continue;
        f = bt_promdoc_family_find(d, name, n - sl);
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
    if (!bt_promdoc_value(vs, vn, true, &value)) {
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
        } else if (!bt_promdoc_value(ts, tn, false, &time)) {
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
        if (!bt_promdoc_value(le, strlen(le), true, &lev) || isnan(lev)) {
            fail(ps, "bad le value \"%.40s\" in %s", le, name);
            goto bad;
        }
    }
    if (strcmp(suffix, "_created") == 0) {
        /* creation time of a counter/histogram: metadata, not a value */
        free(name);
        bt_promdoc_free_labels(labels, nl);
        return true;
    }
    uint64_t h = bt_promdoc_series_hash(name, labels, nl);
    int dup = bt_promdoc_series_find(ps->d, h, name, labels, nl);
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
        bt_promdoc_free_labels(labels, nl);
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
    int i = bt_promdoc_series_add(ps->d, name, labels, nl, h);
    struct bt_prom_series *s = &ps->d->series[i];
    s->family = fam;
    s->value = value;
    s->has_time = has_time;
    s->time = time;
    s->line = ps->line;
    return true;
bad:
    free(name);
    bt_promdoc_free_labels(labels, nl);
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
    int f = bt_promdoc_family_find(ps->d, name, n);
    if (f >= 0)
        return f;
    char *tmp = dup_n(name, n);
    f = bt_promdoc_family_add(ps->d, tmp, ps->line);
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
        if (!bt_promdoc_ieq(ts, tn, types[i].name) || (om && types[i].text_only) ||
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
