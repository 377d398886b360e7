/* The config as data: defaults, routes by name, what holds once they are known.
 * core/config_ini.c reads the INI text into it. */
#include "core/config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

void bt_route_defaults(struct bt_route *r)
{
    memset(r, 0, sizeof *r);
    r->max_tokens = NAN;
    r->concurrency_limit = NAN;
    r->burndown = NAN;
    r->burndown_source = "default";
    r->burndown_prior = NAN;
    r->burndown_prior_source = "default";
    r->burndown_steady = NAN;
    r->model_units = NAN;
    r->budget_usd_per_day = NAN;
    for (int k = 0; k < BT_Q_COUNT; k++)
        r->quota[k].value = NAN;
}

void bt_config_defaults(struct bt_config *c)
{
    memset(c, 0, sizeof *c);
    c->interval = 60;
    c->admission_gap = 5;
    c->cw_lag = 120;
    c->warn = (struct bt_threshold){20, true};
    c->crit = (struct bt_threshold){5, true};
    c->daily_warn_pct = 80;
    c->daily_crit_pct = 95;
    c->oversize_factor = 4;
    c->oversize_margin = 0.25;
    c->retry_share = 0.2;
    bt_strlcpy(c->share_label, "team", sizeof c->share_label);
    c->share_top_n = 10;
    c->history_minutes = 1440;
    c->detail_interval = 300;
    c->adaptive_cadence = true;
    c->price_list = true;
    c->budget_usd_per_day = NAN;
    c->spend_spike_factor = 3;
    c->spend_spike_floor = 5;
    c->spend_spike_minutes = 3;
    bt_strlcpy(c->theme, "default", sizeof c->theme);
}

bool bt_parse_threshold(const char *s, struct bt_threshold *t)
{
    char buf[64];
    bt_strlcpy(buf, s, sizeof buf);
    char *v = bt_trim(buf);
    size_t n = strlen(v);
    bool pct = n > 0 && v[n - 1] == '%';
    if (pct)
        v[n - 1] = '\0';
    double d;
    if (strpbrk(v, "xX") || !bt_parse_double(v, &d) || d < 0 || (pct && d > 100)) /* decimal only */
        return false;
    t->value = d;
    t->pct = pct;
    return true;
}

int bt_config_find_route(const struct bt_config *c, const char *name)
{
    for (int i = 0; i < c->nroutes; i++)
        if (strcmp(c->routes[i].name, name) == 0)
            return i;
    return -1;
}

int bt_config_add_route(struct bt_config *c, const char *name)
{
    /* the capacity is the next power of two: grown only when nroutes is one (or
     * 0), so adding N routes copies O(N) in all, not O(N^2) */
    size_t n = (size_t)c->nroutes;
    if ((n & (n - 1)) == 0)
        c->routes = bt_xrealloc(c->routes, (n ? 2 * n : 1) * sizeof *c->routes);
    struct bt_route *r = &c->routes[c->nroutes];
    bt_route_defaults(r);
    bt_strlcpy(r->name, name, sizeof r->name);
    return c->nroutes++;
}

/* AWS Region names: us-east-1, eu-central-2, us-gov-west-1, cn-northwest-1. */
bool bt_config_valid_region(const char *s)
{
    const char *q = s;
    int parts = 0;
    while (*q) {
        const char *b = q;
        while (*q >= 'a' && *q <= 'z')
            q++;
        if (q == b)
            break;
        parts++;
        if (*q != '-')
            return false;
        q++;
    }
    if (parts < 2 || !(*q >= '1' && *q <= '9'))
        return false;
    while (*q >= '0' && *q <= '9')
        q++;
    return !*q && strlen(s) < 32;
}

bool bt_config_need_burndown(struct bt_config *c)
{
    if (!c->burndown.n && !c->burndown_error[0])
        snprintf(c->burndown_error, sizeof c->burndown_error,
                 "burndown table: not loaded (bt_config_init loads it)");
    return !c->burndown_error[0];
}

void bt_config_serve_history(struct bt_config *c)
{
    if (!c->history_set)
        c->history_minutes = BT_SERVE_HISTORY_MINUTES;
}

void bt_config_finish(struct bt_config *c)
{
    bt_config_need_burndown(c);
    if (c->override_region[0])
        bt_strlcpy(c->region, c->override_region, sizeof c->region);
    if (c->override_profile[0])
        bt_strlcpy(c->profile, c->override_profile, sizeof c->profile);
    for (int i = 0; i < c->nroutes; i++) {
        struct bt_route *r = &c->routes[i];
        if (!r->inference_set)
            r->inference = bt_inference_from_model(r->model);
        bt_route_burndown(r, &c->burndown); /* a config value stays, the row is named */
        if (!r->region[0])
            bt_strlcpy(r->region, c->region, sizeof r->region);
        if (!r->account[0])
            bt_strlcpy(r->account, c->account, sizeof r->account);
    }
}

void bt_config_free(struct bt_config *c)
{
    free(c->routes);
    c->routes = NULL;
    c->nroutes = 0;
    bt_burndown_free(&c->burndown);
    bt_prices_free(&c->prices);
}
