#include "core/burndown.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/util.h"

void bt_burndown_add(struct bt_burndown *b, const char *pattern, double factor, int endpoint,
                     const char *origin)
{
    b->rules = bt_xrealloc(b->rules, (size_t)(b->n + 1) * sizeof *b->rules);
    struct bt_burndown_rule *r = &b->rules[b->n++];
    memset(r, 0, sizeof *r);
    bt_strlcpy(r->pattern, pattern, sizeof r->pattern);
    r->factor = factor;
    r->endpoint = endpoint;
    bt_strlcpy(r->origin, origin ? origin : "", sizeof r->origin);
}

/* After the factor: "endpoint=runtime" / "endpoint=mantle" (the row's scope) and
 * "family" (a family floor), in either order, each at most once. */
static bool row_flags(char *rest, int *endpoint, bool *family)
{
    *endpoint = -1;
    *family = false;
    bool scoped = false;
    char *p = bt_trim(rest);
    while (*p) {
        size_t n = strcspn(p, " \t");
        char *next = p + n;
        if (*next)
            *next++ = '\0';
        if (!strcmp(p, "endpoint=runtime") && !scoped)
            *endpoint = BT_EP_RUNTIME;
        else if (!strcmp(p, "endpoint=mantle") && !scoped)
            *endpoint = BT_EP_MANTLE;
        else if (!strcmp(p, "family") && !*family)
            *family = true;
        else
            return false;
        scoped = scoped || *endpoint >= 0;
        p = next + strspn(next, " \t");
    }
    return true;
}

static bool burndown_line(void *arg, char *pat, char *val, const char *name, int lineno,
                          char *err, size_t errlen)
{
    char *semi = strpbrk(val, ";#");
    if (semi) {
        *semi = '\0';
        val = bt_trim(val);
    }
    double f;
    int endpoint = -1;
    bool family = false;
    char *sp = strpbrk(val, " \t");
    if (sp)
        *sp++ = '\0';
    char rest[128];
    bt_strlcpy(rest, sp ? sp : "", sizeof rest);
    if (!*pat || !bt_parse_double(val, &f) || f < 1 || f > 1000 ||
        (sp && !row_flags(sp, &endpoint, &family))) {
        snprintf(err, errlen,
                 "%s:%d: bad burndown row '%s%s%s' (a factor from 1 to 1000, then optionally "
                 "endpoint=runtime or endpoint=mantle, and family for a family floor)",
                 name, lineno, val, rest[0] ? " " : "", rest);
        return false;
    }
    const char *base = strrchr(name, '/');
    char origin[64];
    snprintf(origin, sizeof origin, "%s:%d", base ? base + 1 : name, lineno);
    bt_burndown_add(arg, pat, f, endpoint, origin);
    struct bt_burndown *b = arg;
    b->rules[b->n - 1].family = family;
    return true;
}

bool bt_burndown_parse(struct bt_burndown *b, const char *text, const char *name, char *err,
                       size_t errlen)
{
    return bt_parse_kv_lines(text, name, "model-pattern = factor", burndown_line, b, err, errlen);
}

const struct bt_burndown_rule *bt_burndown_find(const struct bt_burndown *b, const char *model_id,
                                                int endpoint)
{
    const char *id = bt_profile_strip(model_id);
    for (int i = b->n - 1; i >= 0; i--) {
        const struct bt_burndown_rule *r = &b->rules[i];
        if (r->endpoint >= 0 && r->endpoint != endpoint)
            continue;
        /* the pattern's literal head must begin the ID: most rows are skipped without
         * fnmatch, which in a UTF-8 locale converts both strings to wide characters
         * (a row scan per route was a twentieth of a 500-route check) */
        size_t lit = strcspn(r->pattern, "*?[\\");
        if ((!strncmp(r->pattern, id, lit) && fnmatch(r->pattern, id, 0) == 0) ||
            (!strncmp(r->pattern, model_id, lit) && fnmatch(r->pattern, model_id, 0) == 0))
            return r;
    }
    return NULL;
}

double bt_burndown_lookup(const struct bt_burndown *b, const char *model_id, bool *matched)
{
    const struct bt_burndown_rule *r = bt_burndown_find(b, model_id, BT_EP_RUNTIME);
    if (matched)
        *matched = r && strcmp(r->pattern, "*") != 0;
    return r ? r->factor : 1;
}

void bt_burndown_row_text(const struct bt_burndown_rule *row, char *out, size_t n)
{
    if (!row) {
        snprintf(out, n, "no table row (1)");
        return;
    }
    snprintf(out, n, "%s%s%s = %g%s%s", row->origin, row->origin[0] ? " " : "", row->pattern,
             row->factor, row->endpoint == BT_EP_RUNTIME ? " (runtime)"
             : row->endpoint == BT_EP_MANTLE ? " (mantle)" : "",
             row->family ? " (family floor, unverified)" : "");
}

double bt_burndown_hold_bound(double reservation, double max_tokens, double burndown)
{
    if (!(burndown > 5) || !isfinite(reservation) || !isfinite(max_tokens) || max_tokens < 0)
        return NAN;
    return reservation + max_tokens * (burndown - 1);
}

bool bt_burndown_disagrees(double measured, double expected)
{
    return !isnan(measured) && !isnan(expected) &&
           fabs(measured - expected) > fmax(0.5, 0.2 * expected);
}

void bt_burndown_measure(const struct bt_burndown_window *w, struct bt_burndown_steady *out)
{
    double v[BT_BURNDOWN_WINDOW];
    int n = 0;
    out->value = out->spread = NAN;
    out->minutes = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (int i = BT_BURNDOWN_WINDOW - 1; i >= 0; i--) { /* newest first */
        double est = w->est[i], out_tok = w->out[i], in = w->in[i], cw = w->cw[i];
        if (!isfinite(est) || !isfinite(out_tok) || out_tok < BT_BURNDOWN_MIN_OUTPUT || isnan(in))
            continue;
        double b = (est - in - (isnan(cw) ? 0 : cw)) / out_tok;
        if (isfinite(b)) {
            v[n++] = b;
            lo = b < lo ? b : lo;
            hi = b > hi ? b : hi;
        }
    }
    out->minutes = n;
    if (!n)
        return;
    double med = bt_median(v, n); /* a selection: the values a sort gives */
    out->spread = med > 0 ? (hi - lo) / med : NAN;
    if (n >= BT_BURNDOWN_MIN_MINUTES && med >= 1 && med <= 1000 &&
        out->spread <= BT_BURNDOWN_MAX_SPREAD)
        /* every rate AWS has published is whole: a median within 3 % of a whole
         * number is that number, else it is kept to two decimals */
        out->value = fabs(med - round(med)) <= 0.03 * round(med) ? round(med) : round(med * 100) / 100;
}

void bt_route_burndown(struct bt_route *r, const struct bt_burndown *b)
{
    const struct bt_burndown_rule *row =
        bt_burndown_find(b, r->base_model[0] ? r->base_model : r->model, (int)r->endpoint);
    if (row)
        bt_burndown_row_text(row, r->burndown_row, sizeof r->burndown_row);
    else
        r->burndown_row[0] = '\0';
    bool catch_all = !row || !strcmp(row->pattern, "*");
    if (r->endpoint == BT_EP_MANTLE) { /* no burndown: output counts once (JSON null) */
        r->burndown_prior = 1;
        r->burndown_prior_source = "none";
        r->burndown_row[0] = '\0';
    } else if (r->burndown_source && !strcmp(r->burndown_source, "config") && !isnan(r->burndown)) {
        r->burndown_prior = r->burndown;
        r->burndown_prior_source = "config";
    } else {
        r->burndown_prior = row ? row->factor : 1;
        r->burndown_prior_source = catch_all ? "default" : row->family ? "family" : "table";
    }
    if (catch_all && r->endpoint != BT_EP_MANTLE)
        r->burndown_row[0] = '\0'; /* "1 for every other model" names no model */
    r->burndown = r->burndown_prior;
    r->burndown_source = r->burndown_prior_source;
    r->burndown_verified = !strcmp(r->burndown_source, "table");
    r->burndown_steady = NAN;
    r->burndown_steady_minutes = 0;
}

bool bt_route_burndown_settles(const struct bt_route *r)
{
    const char *prior = r->burndown_prior_source ? r->burndown_prior_source : "default";
    return !isnan(r->burndown_prior) && strcmp(prior, "none") != 0;
}

void bt_route_burndown_steady(struct bt_route *r, const struct bt_burndown_steady *m)
{
    if (!bt_route_burndown_settles(r))
        return; /* mantle, or a route whose prior was never set */
    const char *prior = r->burndown_prior_source ? r->burndown_prior_source : "default";
    r->burndown_steady = m->value;
    r->burndown_steady_minutes = m->minutes;
    bool steady = !isnan(m->value);
    bool agrees = steady && !bt_burndown_disagrees(m->value, r->burndown_prior);
    if (!strcmp(prior, "config") || (!strcmp(prior, "table") && (!steady || agrees))) {
        /* the config always wins; a table row wins where nothing steady contradicts it */
        r->burndown = r->burndown_prior;
        r->burndown_source = prior;
        r->burndown_verified = !strcmp(prior, "table") || agrees;
    } else if (steady) {
        /* an agreeing floor or default keeps its exact value, now backed */
        r->burndown = agrees ? r->burndown_prior : m->value;
        r->burndown_source = "measured";
        r->burndown_verified = true;
    } else {
        r->burndown = r->burndown_prior;
        r->burndown_source = prior;
        r->burndown_verified = !strcmp(prior, "measured"); /* a poller's measurement, read back */
    }
}

void bt_burndown_free(struct bt_burndown *b)
{
    free(b->rules);
    b->rules = NULL;
    b->n = 0;
}
