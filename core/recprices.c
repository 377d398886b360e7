/* The recording header's spend settings (issue 36, format 2.2): the global
 * budget_usd_per_day and spend_spike_* keys in "config", each route's tier,
 * model_units and budget_usd_per_day, and "prices": the price rows in effect when
 * recording started (data/prices.conf, the Price List API's cache, the config's
 * [prices], in that order: later rows win), so a replay prices the recorded tokens
 * as the live run did, whatever table the replaying machine has installed. A file
 * without "prices" (before 2.2) is priced with the installed table, and says so.
 * Every value is held to what the config takes; a price row is hostile text and
 * hostile numbers, and a bad one refuses the header. */
#include "core/recfmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/prices.h"
#include "core/util.h"

void bt_rec_header_spend(cJSON *c, const struct bt_config *cfg)
{
    if (!isnan(cfg->budget_usd_per_day))
        cJSON_AddNumberToObject(c, "budget_usd_per_day", cfg->budget_usd_per_day);
    cJSON_AddNumberToObject(c, "spend_spike_factor", cfg->spend_spike_factor);
    cJSON_AddNumberToObject(c, "spend_spike_floor", cfg->spend_spike_floor);
    cJSON_AddNumberToObject(c, "spend_spike_minutes", cfg->spend_spike_minutes);
    if (cfg->prices_note[0])
        cJSON_AddStringToObject(c, "prices_note", cfg->prices_note);
    if (cfg->nbudgets) { /* [team NAME] / [group ROUTE] budget_usd_per_day */
        cJSON *a = cJSON_AddArrayToObject(c, "budgets");
        for (int i = 0; i < cfg->nbudgets; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, cfg->budgets[i].team ? "team" : "group",
                                    cfg->budgets[i].name);
            cJSON_AddNumberToObject(o, "budget_usd_per_day", cfg->budgets[i].usd);
            cJSON_AddItemToArray(a, o);
        }
    }
}

void bt_rec_route_spend(cJSON *o, const struct bt_route *r)
{
    cJSON_AddStringToObject(o, "tier", bt_tier_name((enum bt_tier)r->tier));
    if (!isnan(r->model_units))
        cJSON_AddNumberToObject(o, "model_units", r->model_units);
    if (!isnan(r->budget_usd_per_day))
        cJSON_AddNumberToObject(o, "budget_usd_per_day", r->budget_usd_per_day);
}

static void add_price(cJSON *o, const char *k, double v)
{
    if (!isnan(v))
        cJSON_AddNumberToObject(o, k, v);
}

cJSON *bt_rec_prices_json(const struct bt_config *cfg)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < cfg->prices.n; i++) {
        const struct bt_price_row *r = &cfg->prices.rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "pattern", r->pattern);
        cJSON_AddStringToObject(o, "region", r->region);
        if (r->endpoint >= 0)
            cJSON_AddStringToObject(o, "endpoint", bt_endpoint_name((enum bt_endpoint)r->endpoint));
        if (r->inference >= 0)
            cJSON_AddStringToObject(o, "inference",
                                    bt_inference_name((enum bt_inference)r->inference));
        cJSON_AddStringToObject(o, "tier", bt_tier_name((enum bt_tier)r->tier));
        add_price(o, "in", r->in);
        add_price(o, "out", r->out);
        add_price(o, "cache_read", r->cache_read);
        add_price(o, "cache_write", r->cache_write);
        add_price(o, "unit_hour", r->unit_hour);
        if (r->source[0])
            cJSON_AddStringToObject(o, "source", r->source);
        if (r->date[0])
            cJSON_AddStringToObject(o, "date", r->date);
        if (r->origin[0])
            cJSON_AddStringToObject(o, "origin", r->origin);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* a number in [lo, hi] (finite), else false and *out untouched */
static bool num_in(const cJSON *o, const char *k, double lo, double hi, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi)
        return false;
    *out = v->valuedouble;
    return true;
}

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

void bt_rec_read_spend(const cJSON *c, struct bt_config *cfg)
{
    double d;
    if (num_in(c, "budget_usd_per_day", BT_BUDGET_MIN, BT_BUDGET_MAX, &d))
        cfg->budget_usd_per_day = d;
    if (num_in(c, "spend_spike_factor", BT_SPIKE_FACTOR_MIN, BT_SPIKE_FACTOR_MAX, &d))
        cfg->spend_spike_factor = d;
    if (num_in(c, "spend_spike_floor", 0, BT_SPIKE_FLOOR_MAX, &d))
        cfg->spend_spike_floor = d;
    if (num_in(c, "spend_spike_minutes", 1, BT_SPIKE_MINUTES_MAX, &d))
        cfg->spend_spike_minutes = (int)d;
    /* the record-time note (a table that could not be read): shown as it is, so
     * only printable text */
    const char *note = str_of(c, "prices_note");
    bool ok = note && strlen(note) < sizeof cfg->prices_note;
    for (const char *p = note; ok && *p; p++)
        ok = (unsigned char)*p >= 0x20 && *p != 0x7f;
    if (ok)
        bt_strlcpy(cfg->prices_note, note, sizeof cfg->prices_note);
    /* the team and group budgets: a name is hostile text (printable, bounded), a
     * budget held to the config's bounds; a bad entry is left out */
    const cJSON *bs = cJSON_GetObjectItemCaseSensitive(c, "budgets");
    const cJSON *b;
    cfg->nbudgets = 0;
    if (!cJSON_IsArray(bs))
        bs = NULL;
    cJSON_ArrayForEach(b, bs)
    {
        const char *team = str_of(b, "team"), *group = str_of(b, "group");
        const char *name = team ? team : group;
        bool good = name && *name && strlen(name) < sizeof cfg->budgets[0].name &&
                    cfg->nbudgets < BT_BUDGETS_MAX &&
                    num_in(b, "budget_usd_per_day", BT_BUDGET_MIN, BT_BUDGET_MAX, &d);
        for (const char *p = name; good && *p; p++)
            good = (unsigned char)*p >= 0x20 && *p != 0x7f;
        if (!good)
            continue;
        struct bt_budget *x = &cfg->budgets[cfg->nbudgets++];
        x->team = team != NULL;
        bt_strlcpy(x->name, name, sizeof x->name);
        x->usd = d;
    }
}

void bt_rec_read_route_spend(const cJSON *o, struct bt_route *r)
{
    const char *t = str_of(o, "tier");
    int tier = t ? bt_tier_by_name(t) : -1;
    if (tier >= 0)
        r->tier = tier;
    double d;
    if (num_in(o, "model_units", 1, BT_MODEL_UNITS_MAX, &d))
        r->model_units = d;
    if (num_in(o, "budget_usd_per_day", BT_BUDGET_MIN, BT_BUDGET_MAX, &d))
        r->budget_usd_per_day = d;
}

/* a text member into dst: absent is "", not a string or too long is an error */
static bool text_into(const cJSON *o, const char *k, char *dst, size_t n, char *why, size_t wn)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    dst[0] = '\0';
    if (!v)
        return true;
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= n) {
        snprintf(why, wn, "\"%s\" is not a string of at most %zu bytes", k, n - 1);
        return false;
    }
    bt_strlcpy(dst, v->valuestring, n);
    return true;
}

/* a price: absent is NAN (not given); present, a finite number of 0 .. BT_PRICE_MAX
 * (cJSON reads 1e999 as infinity) */
static bool price_into(const cJSON *o, const char *k, double *dst, char *why, size_t wn)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    *dst = NAN;
    if (!v)
        return true;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
        v->valuedouble > BT_PRICE_MAX) {
        snprintf(why, wn, "\"%s\" is not a price of 0 to 1000000 USD", k);
        return false;
    }
    *dst = v->valuedouble;
    return true;
}

int bt_rec_read_price(const cJSON *o, struct bt_config *cfg, char *why, size_t n)
{
    struct bt_price_row r;
    memset(&r, 0, sizeof r);
    if (!cJSON_IsObject(o)) {
        snprintf(why, n, "not an object");
        return -1;
    }
    if (!text_into(o, "pattern", r.pattern, sizeof r.pattern, why, n) ||
        !text_into(o, "region", r.region, sizeof r.region, why, n) ||
        !text_into(o, "source", r.source, sizeof r.source, why, n) ||
        !text_into(o, "date", r.date, sizeof r.date, why, n) ||
        !text_into(o, "origin", r.origin, sizeof r.origin, why, n) ||
        !price_into(o, "in", &r.in, why, n) || !price_into(o, "out", &r.out, why, n) ||
        !price_into(o, "cache_read", &r.cache_read, why, n) ||
        !price_into(o, "cache_write", &r.cache_write, why, n) ||
        !price_into(o, "unit_hour", &r.unit_hour, why, n))
        return -1;
    /* a tier, endpoint or inference type this reader does not know (a newer
     * writer's): the row prices nothing here, and is skipped */
    const char *t = str_of(o, "tier"), *ep = str_of(o, "endpoint"), *inf = str_of(o, "inference");
    r.tier = t ? bt_tier_by_name(t) : BT_SVC_STANDARD;
    r.endpoint = !ep ? -1 : !strcmp(ep, "runtime") ? BT_EP_RUNTIME
                 : !strcmp(ep, "mantle") ? BT_EP_MANTLE : -2;
    r.inference = inf ? bt_inference_by_name(inf) : -1;
    if (r.tier < 0 || r.endpoint == -2 || (inf && r.inference < 0))
        return 0;
    return bt_prices_add_row(&cfg->prices, &r, why, n) ? 1 : -1;
}
