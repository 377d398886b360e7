#include "core/prices.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/util.h"

static const char *const tier_names[BT_SVC_COUNT] = {"standard", "priority", "flex", "reserved",
                                                      "batch"};

const char *bt_tier_name(enum bt_tier t)
{
    return (unsigned)t < BT_SVC_COUNT ? tier_names[t] : "standard";
}

int bt_tier_by_name(const char *name)
{
    if (!strcmp(name, "default"))
        return BT_SVC_STANDARD; /* the runtime API's name for it */
    for (int i = 0; i < BT_SVC_COUNT; i++)
        if (!strcmp(name, tier_names[i]))
            return i;
    return -1;
}

/* A price: a plain decimal from 0 to 1e6 USD (per million tokens, or per unit-hour). */
static bool price(const char *v, double *out)
{
    double d;
    if (!bt_parse_double(v, &d) || !(d >= 0) || d > BT_PRICE_MAX)
        return false;
    *out = d;
    return true;
}

static bool valid_date(const char *v)
{
    if (strlen(v) != 10 || v[4] != '-' || v[7] != '-')
        return false;
    for (int i = 0; i < 10; i++)
        if (i != 4 && i != 7 && (v[i] < '0' || v[i] > '9'))
            return false;
    int mo = (v[5] - '0') * 10 + (v[6] - '0'), d = (v[8] - '0') * 10 + (v[9] - '0');
    return mo >= 1 && mo <= 12 && d >= 1 && d <= 31;
}

/* One "field=value" of a row into r; *seen keeps which fields were given. */
static bool field(struct bt_price_row *r, char *tok, unsigned *seen, char *err, size_t errlen)
{
    static const char *const names[] = {"in", "out", "cache_read", "cache_write", "unit_hour",
                                        "region", "endpoint", "inference", "tier", "source",
                                        "date"};
    char *eq = strchr(tok, '=');
    if (!eq || eq == tok || !eq[1]) {
        snprintf(err, errlen, "'%s' is not field=value", tok);
        return false;
    }
    *eq = '\0';
    const char *v = eq + 1;
    int f = -1;
    for (int i = 0; i < (int)BT_ARRAY_LEN(names); i++)
        if (!strcmp(tok, names[i]))
            f = i;
    if (f < 0) {
        snprintf(err, errlen, "unknown field '%s' (in, out, cache_read, cache_write, unit_hour, "
                 "region, endpoint, inference, tier, source, date)", tok);
        return false;
    }
    if (*seen & (1u << f)) {
        snprintf(err, errlen, "'%s' given twice", tok);
        return false;
    }
    *seen |= 1u << f;
    bool ok = true;
    switch (f) {
    case 0: ok = price(v, &r->in); break;
    case 1: ok = price(v, &r->out); break;
    case 2: ok = price(v, &r->cache_read); break;
    case 3: ok = price(v, &r->cache_write); break;
    case 4: ok = price(v, &r->unit_hour); break;
    case 5: ok = strlen(v) < sizeof r->region; bt_strlcpy(r->region, v, sizeof r->region); break;
    case 6:
        r->endpoint = !strcmp(v, "runtime") ? BT_EP_RUNTIME : !strcmp(v, "mantle") ? BT_EP_MANTLE : -2;
        ok = r->endpoint >= 0;
        break;
    case 7: r->inference = bt_inference_by_name(v); ok = r->inference >= 0; break;
    case 8: r->tier = bt_tier_by_name(v); ok = r->tier >= 0; break;
    case 9: ok = strlen(v) < sizeof r->source; bt_strlcpy(r->source, v, sizeof r->source); break;
    default: ok = valid_date(v); bt_strlcpy(r->date, v, sizeof r->date); break;
    }
    if (!ok)
        snprintf(err, errlen, "bad %s '%s'%s", tok, v,
                 f <= 4 ? " (USD, a decimal from 0 to 1000000)"
                 : f == 6 ? " (runtime or mantle)"
                 : f == 7 ? " (on-demand, cross-region, global, latency-optimized or provisioned)"
                 : f == 8 ? " (standard, priority, flex, reserved or batch)"
                 : f == 10 ? " (YYYY-MM-DD)" : " (too long)");
    return ok;
}

bool bt_prices_add_line(struct bt_prices *p, const char *pattern, const char *fields,
                        const char *origin, char *err, size_t errlen)
{
    struct bt_price_row r;
    memset(&r, 0, sizeof r);
    r.in = r.out = r.cache_read = r.cache_write = r.unit_hour = NAN;
    r.endpoint = r.inference = -1;
    r.tier = BT_SVC_STANDARD;
    bt_strlcpy(r.region, "*", sizeof r.region);
    if (!*pattern || strlen(pattern) >= sizeof r.pattern) {
        snprintf(err, errlen, "a price row needs a model pattern (at most %zu bytes)",
                 sizeof r.pattern - 1);
        return false;
    }
    bt_strlcpy(r.pattern, pattern, sizeof r.pattern);
    char buf[512];
    if (strlen(fields) >= sizeof buf) {
        snprintf(err, errlen, "price row too long");
        return false;
    }
    bt_strlcpy(buf, fields, sizeof buf);
    char *semi = strpbrk(buf, ";#");
    if (semi)
        *semi = '\0';
    unsigned seen = 0;
    char *q = buf;
    for (;;) {
        q += strspn(q, " \t");
        if (!*q)
            break;
        size_t n = strcspn(q, " \t");
        char *next = q + n;
        if (*next)
            *next++ = '\0';
        if (!field(&r, q, &seen, err, errlen))
            return false;
        q = next;
    }
    bt_strlcpy(r.origin, origin ? origin : "", sizeof r.origin);
    return bt_prices_add_row(p, &r, err, errlen);
}

/* text without a control character (a C0 byte or DEL), shorter than max */
static bool clean(const char *s, size_t max)
{
    for (const char *q = s; *q; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7f)
            return false;
    return strlen(s) < max;
}

static bool price_ok(double v)
{
    return isnan(v) || (v >= 0 && v <= BT_PRICE_MAX);
}

bool bt_prices_add_row(struct bt_prices *p, const struct bt_price_row *row, char *err,
                       size_t errlen)
{
    const struct bt_price_row *r = row;
    const struct {
        const char *name, *s;
        size_t max;
    } text[] = {{"pattern", r->pattern, sizeof r->pattern}, {"region", r->region, sizeof r->region},
                {"source", r->source, sizeof r->source}, {"date", r->date, sizeof r->date},
                {"origin", r->origin, sizeof r->origin}};
    for (size_t i = 0; i < BT_ARRAY_LEN(text); i++)
        if (!clean(text[i].s, text[i].max)) {
            snprintf(err, errlen, "%s has a control character or is too long", text[i].name);
            return false;
        }
    if (!r->pattern[0] || !r->region[0]) {
        snprintf(err, errlen, "a price row needs a model pattern and a Region");
        return false;
    }
    const double v[] = {r->in, r->out, r->cache_read, r->cache_write, r->unit_hour};
    for (size_t i = 0; i < BT_ARRAY_LEN(v); i++)
        if (!price_ok(v[i])) {
            snprintf(err, errlen, "a price outside 0 .. 1000000 USD");
            return false;
        }
    if ((unsigned)r->tier >= BT_SVC_COUNT || r->endpoint < -1 || r->endpoint > BT_EP_MANTLE ||
        r->inference < -1 || r->inference >= BT_INF_COUNT || (r->date[0] && !valid_date(r->date))) {
        snprintf(err, errlen, "a bad tier, endpoint, inference type or date");
        return false;
    }
    bool tokens = !isnan(r->in) && !isnan(r->out);
    if (!tokens && isnan(r->unit_hour)) {
        snprintf(err, errlen, "a price row needs in= and out= (USD per million tokens), or "
                 "unit_hour= (Provisioned Throughput)");
        return false;
    }
    if (!isnan(r->in) != !isnan(r->out)) {
        snprintf(err, errlen, "a price row gives both in= and out=, or neither");
        return false;
    }
    if (p->n >= p->cap) { /* geometric: a recording's 20,000 rows are not 20,000 copies */
        p->cap = p->cap ? 2 * p->cap : 16;
        if (p->cap <= p->n)
            p->cap = 2 * p->n;
        p->rows = bt_xrealloc(p->rows, (size_t)p->cap * sizeof *p->rows);
    }
    p->rows[p->n++] = *r;
    return true;
}

struct parse_arg {
    struct bt_prices *p;
};

static bool price_line(void *arg, char *pat, char *val, const char *name, int lineno, char *err,
                       size_t errlen)
{
    struct parse_arg *a = arg;
    const char *base = strrchr(name, '/');
    char origin[64], why[256];
    snprintf(origin, sizeof origin, "%s:%d", base ? base + 1 : name, lineno);
    if (!bt_prices_add_line(a->p, pat, val, origin, why, sizeof why)) {
        snprintf(err, errlen, "%s:%d: bad price row: %s", name, lineno, why);
        return false;
    }
    return true;
}

bool bt_prices_parse(struct bt_prices *p, const char *text, const char *name, char *err,
                     size_t errlen)
{
    struct parse_arg a = {p};
    return bt_parse_kv_lines(text, name, "model-pattern = in=USD out=USD ...", price_line, &a, err,
                             errlen);
}

static bool glob_match(const char *pattern, const char *s)
{
    /* the pattern's literal head must begin s: most rows are left at their first
     * characters without fnmatch (as in core/burndown.c); a literal, or a literal and
     * one trailing * (most rows: "anthropic.claude-sonnet-4-5*", "us-east-1"), needs no
     * fnmatch either (a poll prices every route each evaluation) */
    size_t i = 0;
    for (char c = pattern[0]; c && c != '*' && c != '?' && c != '[' && c != '\\';
         c = pattern[++i])
        if (c != s[i])
            return false;
    if (!pattern[i])
        return !s[i];
    if (pattern[i] == '*' && !pattern[i + 1])
        return true;
    return fnmatch(pattern, s, 0) == 0;
}

static const struct bt_price_row *find_one(const struct bt_prices *p, const char *id,
                                           const char *region, int endpoint, int inference,
                                           int tier)
{
    const char *bare = bt_profile_strip(id);
    for (int i = p->n - 1; i >= 0; i--) {
        const struct bt_price_row *r = &p->rows[i];
        if (r->tier != tier || (r->endpoint >= 0 && r->endpoint != endpoint) ||
            (r->inference >= 0 && r->inference != inference))
            continue;
        if (!glob_match(r->pattern, bare) && (bare == id || !glob_match(r->pattern, id)))
            continue;
        if (strcmp(r->region, "*") && !glob_match(r->region, region))
            continue;
        return r;
    }
    return NULL;
}

const struct bt_price_row *bt_prices_find(const struct bt_prices *p, const char *model_id,
                                          const char *base_model, const char *region,
                                          int endpoint, int inference, int tier)
{
    const struct bt_price_row *r = find_one(p, model_id, region, endpoint, inference, tier);
    if (!r && base_model && *base_model)
        r = find_one(p, base_model, region, endpoint, inference, tier);
    return r;
}

void bt_price_row_text(const struct bt_price_row *row, char *out, size_t n)
{
    if (!row) {
        snprintf(out, n, "no price row");
        return;
    }
    /* "ORIGIN PATTERN (TIER, SOURCE, DATE)", cut at n - 1 bytes as snprintf cuts it:
     * the pieces put together, not a format parsed (export writes it every row) */
    const char *part[] = {row->origin, row->origin[0] ? " " : "", row->pattern, " (",
                          bt_tier_name((enum bt_tier)row->tier), row->source[0] ? ", " : "",
                          row->source, row->date[0] ? ", " : "", row->date, ")"};
    if (!n)
        return;
    size_t at = 0;
    for (size_t k = 0; k < sizeof part / sizeof part[0] && at + 1 < n; k++) {
        size_t len = strlen(part[k]);
        if (len > n - 1 - at)
            len = n - 1 - at;
        memcpy(out + at, part[k], len);
        at += len;
    }
    out[at] = '\0';
}

void bt_prices_free(struct bt_prices *p)
{
    free(p->rows);
    p->rows = NULL;
    p->n = p->cap = 0;
}
