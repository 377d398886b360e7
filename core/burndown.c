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

/* "endpoint=runtime" / "endpoint=mantle" after the factor: the row's scope. */
static bool endpoint_scope(char *rest, int *endpoint)
{
    *endpoint = -1;
    rest = bt_trim(rest);
    if (!*rest)
        return true;
    if (!strcmp(rest, "endpoint=runtime"))
        *endpoint = BT_EP_RUNTIME;
    else if (!strcmp(rest, "endpoint=mantle"))
        *endpoint = BT_EP_MANTLE;
    else
        return false;
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
    char *sp = strpbrk(val, " \t");
    if (sp)
        *sp++ = '\0';
    if (!*pat || !bt_parse_double(val, &f) || f < 1 || f > 1000 ||
        (sp && !endpoint_scope(sp, &endpoint))) {
        snprintf(err, errlen,
                 "%s:%d: bad burndown row '%s%s%s' (a factor from 1 to 1000, then optionally "
                 "endpoint=runtime or endpoint=mantle)",
                 name, lineno, val, sp ? " " : "", sp ? sp : "");
        return false;
    }
    const char *base = strrchr(name, '/');
    char origin[64];
    snprintf(origin, sizeof origin, "%s:%d", base ? base + 1 : name, lineno);
    bt_burndown_add(arg, pat, f, endpoint, origin);
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
    snprintf(out, n, "%s%s%s = %g%s", row->origin, row->origin[0] ? " " : "", row->pattern,
             row->factor, row->endpoint == BT_EP_RUNTIME ? " (runtime)"
             : row->endpoint == BT_EP_MANTLE ? " (mantle)" : "");
}

double bt_burndown_hold_bound(double reservation, double max_tokens, double burndown)
{
    if (!(burndown > 5) || !isfinite(reservation) || !isfinite(max_tokens) || max_tokens < 0)
        return NAN;
    return reservation + max_tokens * (burndown - 1);
}

void bt_route_burndown(struct bt_route *r, const struct bt_burndown *b)
{
    const struct bt_burndown_rule *row =
        bt_burndown_find(b, r->base_model[0] ? r->base_model : r->model, (int)r->endpoint);
    r->burndown = row ? row->factor : 1;
    r->burndown_source = row && strcmp(row->pattern, "*") != 0 ? "table" : "default";
    if (row)
        bt_burndown_row_text(row, r->burndown_row, sizeof r->burndown_row);
    else
        r->burndown_row[0] = '\0';
}

void bt_burndown_free(struct bt_burndown *b)
{
    free(b->rules);
    b->rules = NULL;
    b->n = 0;
}
