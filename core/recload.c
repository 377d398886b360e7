/* What a recording's lines say, read into a replay (man 5 bedtop-recording): the
 * header becomes its config (the settings, the routes, the prices in effect), and a
 * poll line's events, series, counter readings and coverage feed its store.
 * core/recread.c opens the recording and walks its lines. */
#include "core/recfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plausible.h"
#include "core/util.h"

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool jnum(const cJSON *o, const char *k, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return false;
    *out = v->valuedouble;
    return true;
}

/* A quota's "adjustable" (Service Quotas' flag; absent in older files: unknown). */
static enum bt_adjustable adjustable_of(const cJSON *o)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "adjustable");
    return !cJSON_IsBool(v) ? BT_ADJ_UNKNOWN : cJSON_IsTrue(v) ? BT_ADJ_YES : BT_ADJ_NO;
}

static int name_index(const char *const *names, int n, const char *s)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(names[i], s))
            return i;
    return -1;
}

static bool parse_route(const cJSON *o, struct bt_route *r, char *why, size_t n)
{
    static const char *const eps[] = {"runtime", "mantle"};
    static const char *const qsrc[] = {"unknown", "service-quotas", "config", "default"};
    const char *name = jstr(o, "name"), *model = jstr(o, "model");
    if (!name || !model || !*name) {
        snprintf(why, n, "route without name or model");
        return false;
    }
    bt_route_defaults(r);
    bt_strlcpy(r->name, name, sizeof r->name);
    bt_strlcpy(r->model, model, sizeof r->model);
    const struct {
        const char *key;
        char *dst;
        size_t n;
    } strs[] = {
        {"region", r->region, sizeof r->region},
        {"profile", r->profile, sizeof r->profile},
        {"project", r->project, sizeof r->project},
        {"base_model", r->base_model, sizeof r->base_model},
        {"account", r->account, sizeof r->account},
        {"context", r->context, sizeof r->context},
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(strs); i++)
        if (jstr(o, strs[i].key))
            bt_strlcpy(strs[i].dst, jstr(o, strs[i].key), strs[i].n);
    int e = name_index(eps, 2, jstr(o, "endpoint"));
    r->endpoint = e == 1 ? BT_EP_MANTLE : BT_EP_RUNTIME;
    int inf = bt_inference_by_name(jstr(o, "inference"));
    r->inference = inf < 0 ? bt_inference_from_model(r->model) : (enum bt_inference)inf;
    r->inference_set = true;
    const char *prio = jstr(o, "priority");
    r->priority = prio && !strcmp(prio, "offline") ? BT_PRIO_OFFLINE : BT_PRIO_ONLINE;
    /* settings held to what the config takes (core/plausible.h); one outside is
     * not the route's, and the default stands */
    double d;
    char pwhy[96];
    if (jnum(o, "max_tokens", &d) && bt_setting_plausible(d, BT_MAX_TOKENS_SETTING, pwhy, sizeof pwhy))
        r->max_tokens = d;
    if (jnum(o, "concurrency_limit", &d) && bt_setting_plausible(d, BT_MAX_CALLS, pwhy, sizeof pwhy))
        r->concurrency_limit = d;
    if (!jnum(o, "burndown", &r->burndown) ||
        !bt_setting_plausible(r->burndown, BT_MAX_BURNDOWN, pwhy, sizeof pwhy))
        r->burndown = 1;
    const char *bs = jstr(o, "burndown_source");
    r->burndown_source = bs && !strcmp(bs, "config") ? "config"
                         : bs && !strcmp(bs, "table") ? "table"
                         : bs && !strcmp(bs, "family") ? "family" : "default";
    if (jstr(o, "burndown_row"))
        bt_strlcpy(r->burndown_row, jstr(o, "burndown_row"), sizeof r->burndown_row);
    if (r->endpoint == BT_EP_MANTLE) { /* files before 2.0 said "table" for mantle */
        r->burndown = 1;
        r->burndown_source = "none";
        r->burndown_row[0] = '\0';
    }
    /* the recorded value is the prior; a measurement is made again from the samples */
    r->burndown_prior = r->burndown;
    r->burndown_prior_source = r->burndown_source;
    r->burndown_verified = !strcmp(r->burndown_source, "table");
    r->burndown_steady = NAN;
    r->legacy_seen = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "legacy"));
    bt_rec_read_route_spend(o, r);
    if (jstr(o, "quota_code"))
        bt_strlcpy(r->quota_code, jstr(o, "quota_code"), sizeof r->quota_code);
    const cJSON *adm = cJSON_GetObjectItemCaseSensitive(o, "admission");
    if (cJSON_IsTrue(adm))
        bt_strlcpy(r->admission, "(recorded)", sizeof r->admission);
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(o, "quotas");
    for (int k = 0; k < BT_Q_COUNT; k++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(q, bt_quota_kind_name(k));
        double v;
        if (!x || !jnum(x, "value", &v) || !bt_quota_plausible((enum bt_quota_kind)k, v, pwhy, sizeof pwhy))
            continue;
        r->quota[k].value = v;
        int s = name_index(qsrc, 4, jstr(x, "source"));
        r->quota[k].source = s < 0 ? BT_QS_UNKNOWN : (enum bt_quota_source)s;
        int mb = bt_quota_match_by_name(jstr(x, "matched_by"));
        r->quota_match[k] = mb < 0 ? BT_QM_NONE : (enum bt_quota_match)mb;
        if (jstr(x, "code"))
            bt_strlcpy(r->quota[k].code, jstr(x, "code"), sizeof r->quota[k].code);
        if (jstr(x, "name"))
            bt_strlcpy(r->quota[k].name, jstr(x, "name"), sizeof r->quota[k].name);
        r->quota_adjustable[k] = adjustable_of(x);
    }
    return true;
}

/* The header is read without one cJSON tree for all of it (issue 37: a 3.3 MB
 * header of 100,000 routes took 1.67 GB): the scanner locates its members, the
 * few this reader knows (each at most BT_REC_MAX_MEMBER bytes) become one small
 * tree, and the routes are parsed one at a time, each tree freed before the next.
 * Memory is the line, the routes (at most BT_REC_MAX_ROUTES, man 5
 * bedtop-recording) and one route's tree. */
static const char *const hdr_keys[] = {"format", "version", "mode", "created",
                                       "created_by", "signals", "config"};
#define NHDR BT_ARRAY_LEN(hdr_keys)

struct hdr_scan {
    const char *v[NHDR], *vend[NHDR];
    const char *routes, *routes_end;
    const char *prices, *prices_end; /* 2.2 */
};

static bool hdr_member(void *arg, const char *k, size_t klen, const char *v, const char *ve)
{
    struct hdr_scan *hs = arg;
    /* the first of duplicate keys counts, as cJSON_GetObjectItem finds it */
    if (klen == 6 && !memcmp(k, "routes", 6) && !hs->routes) {
        hs->routes = v;
        hs->routes_end = ve;
    }
    if (klen == 6 && !memcmp(k, "prices", 6) && !hs->prices) {
        hs->prices = v;
        hs->prices_end = ve;
    }
    for (size_t i = 0; i < NHDR; i++)
        if (strlen(hdr_keys[i]) == klen && !memcmp(k, hdr_keys[i], klen) && !hs->v[i]) {
            hs->v[i] = v;
            hs->vend[i] = ve;
        }
    return true;
}

/* The known members but the routes as one small object; NULL with err set. */
static cJSON *header_tree(const struct bt_replay *rp, const char *line, struct hdr_scan *hs,
                          char *err, size_t errlen)
{
    if (!bt_rec_scan_object(line, hdr_member, hs))
        return NULL;
    struct bt_buf b = {0};
    bt_buf_putc(&b, '{');
    for (size_t i = 0; i < NHDR; i++) {
        if (!hs->v[i])
            continue;
        size_t n = (size_t)(hs->vend[i] - hs->v[i]);
        if (n > BT_REC_MAX_MEMBER) {
            snprintf(err, errlen, "%s:1: recording header's \"%s\" is %zu bytes (at most %d)",
                     rp->path, hdr_keys[i], n, BT_REC_MAX_MEMBER);
            bt_buf_free(&b);
            return NULL;
        }
        if (b.len > 1)
            bt_buf_putc(&b, ',');
        bt_buf_printf(&b, "\"%s\":", hdr_keys[i]);
        bt_buf_add(&b, hs->v[i], n);
    }
    bt_buf_putc(&b, '}');
    cJSON *h = cJSON_ParseWithLength(b.buf, b.len);
    bt_buf_free(&b);
    return h;
}

struct route_scan {
    struct bt_replay *rp;
    char *err;
    size_t errlen;
    bool failed;
};

static bool hdr_route(void *arg, size_t i, const char *v, const char *ve)
{
    struct route_scan *rs = arg;
    size_t n = (size_t)(ve - v);
    char why[128];
    if (i >= BT_REC_MAX_ROUTES) {
        snprintf(rs->err, rs->errlen,
                 "%s:1: recording header has more than %d routes, the most a recording holds",
                 rs->rp->path, BT_REC_MAX_ROUTES);
        rs->failed = true;
        return false;
    }
    if (n > BT_REC_MAX_MEMBER) {
        snprintf(why, sizeof why, "%zu bytes (at most %d)", n, BT_REC_MAX_MEMBER);
    } else {
        struct bt_route r;
        cJSON *o = cJSON_ParseWithLength(v, n);
        bool ok = parse_route(o, &r, why, sizeof why);
        cJSON_Delete(o);
        if (ok) {
            struct bt_config *c = &rs->rp->cfg;
            int k = bt_config_add_route(c, r.name);
            c->routes[k] = r;
            return true;
        }
    }
    snprintf(rs->err, rs->errlen, "%s:1: route %zu: %s", rs->rp->path, i + 1, why);
    rs->failed = true;
    return false;
}

static bool hdr_price(void *arg, size_t i, const char *v, const char *ve)
{
    struct route_scan *rs = arg;
    size_t n = (size_t)(ve - v);
    char why[160];
    if (i >= BT_REC_MAX_PRICES) {
        snprintf(rs->err, rs->errlen,
                 "%s:1: recording header has more than %d price rows, the most a recording holds",
                 rs->rp->path, BT_REC_MAX_PRICES);
        rs->failed = true;
        return false;
    }
    if (n > BT_REC_MAX_MEMBER) {
        snprintf(why, sizeof why, "%zu bytes (at most %d)", n, BT_REC_MAX_MEMBER);
    } else {
        cJSON *o = cJSON_ParseWithLength(v, n);
        int ok = bt_rec_read_price(o, &rs->rp->cfg, why, sizeof why);
        cJSON_Delete(o);
        if (ok >= 0)
            return true;
    }
    snprintf(rs->err, rs->errlen, "%s:1: recording header's price row %zu: %s; the file is "
             "refused", rs->rp->path, i + 1, why);
    rs->failed = true;
    return false;
}

/* 2.2 "prices": the rows in effect at record time, which the replay prices with
 * (cfg.prices_loaded: the installed table is not read); absent, the replay reads
 * the installed table (io/recfile.c) and says so. */
static bool read_prices(struct bt_replay *rp, const struct hdr_scan *hs, char *err, size_t errlen)
{
    if (!hs->prices)
        return true;
    struct route_scan rs = {.rp = rp, .err = err, .errlen = errlen};
    if (!bt_rec_scan_array(hs->prices, hdr_price, &rs)) {
        if (!rs.failed)
            snprintf(err, errlen, "%s:1: recording header's \"prices\" is not an array", rp->path);
        return false;
    }
    if (rs.failed)
        return false;
    rp->prices_recorded = true;
    rp->cfg.prices_loaded = true;
    return true;
}

bool bt_rec_parse_header(struct bt_replay *rp, const char *line, int *sigmap, char *err,
                         size_t errlen)
{
    struct hdr_scan hs = {0};
    err[0] = '\0';
    cJSON *h = header_tree(rp, line, &hs, err, errlen);
    if (!h && err[0])
        return false;
    const char *fmt = h ? jstr(h, "format") : NULL;
    if (!fmt || strcmp(fmt, BT_REC_FORMAT) != 0) {
        snprintf(err, errlen, "%s:1: not a bedtop recording (no \"format\":\"%s\" header)",
                 rp->path, BT_REC_FORMAT);
        cJSON_Delete(h);
        return false;
    }
    const char *ver = jstr(h, "version");
    int major = 0, minor = 0;
    if (!ver || sscanf(ver, "%d.%d", &major, &minor) < 1) {
        snprintf(err, errlen, "%s:1: recording header has no version", rp->path);
        cJSON_Delete(h);
        return false;
    }
    if (major > BT_REC_MAJOR) {
        snprintf(err, errlen,
                 "%s: recording format %s is newer than this bedtop reads (%d.x); upgrade bedtop",
                 rp->path, ver, BT_REC_MAJOR);
        cJSON_Delete(h);
        return false;
    }
    if (jstr(h, "mode"))
        bt_strlcpy(rp->mode, jstr(h, "mode"), sizeof rp->mode);
    if (jstr(h, "created"))
        bt_parse_iso(jstr(h, "created"), &rp->start);
    if (jstr(h, "created_by"))
        bt_strlcpy(rp->created_by, jstr(h, "created_by"), sizeof rp->created_by);
    /* signal indices in the file -> ours (unknown names are dropped) */
    const cJSON *sigs = cJSON_GetObjectItemCaseSensitive(h, "signals");
    for (int i = 0; i < 256; i++)
        sigmap[i] = -1;
    /* walked, not indexed: cJSON_GetArrayItem(i) walks from the start each time */
    const cJSON *v;
    int ns = 0;
    cJSON_ArrayForEach(v, sigs) {
        if (ns >= 256)
            break;
        sigmap[ns++] = cJSON_IsString(v) ? bt_signal_by_name(v->valuestring) : -1;
    }
    struct bt_config *c = &rp->cfg;
    const cJSON *cj = cJSON_GetObjectItemCaseSensitive(h, "config");
    double d;
    /* durations as the config takes them (1 s or 0 .. BT_DURATION_MAX): a file's
     * 1e300 is not a lag, and the default stands */
    if (jnum(cj, "interval", &d) && d >= 1 && d <= BT_DURATION_MAX)
        c->interval = d;
    if (jnum(cj, "cloudwatch_lag", &d) && d >= 0 && d <= BT_DURATION_MAX)
        c->cw_lag = d;
    if (jstr(cj, "warn_headroom"))
        bt_parse_threshold(jstr(cj, "warn_headroom"), &c->warn);
    if (jstr(cj, "crit_headroom"))
        bt_parse_threshold(jstr(cj, "crit_headroom"), &c->crit);
    if (jnum(cj, "daily_warn", &d))
        c->daily_warn_pct = d;
    if (jnum(cj, "daily_crit", &d))
        c->daily_crit_pct = d;
    if (jnum(cj, "oversize_factor", &d))
        c->oversize_factor = d;
    if (jnum(cj, "oversize_margin", &d))
        c->oversize_margin = d;
    if (jnum(cj, "retry_share", &d))
        c->retry_share = d;
    bt_rec_read_shares(cj, c);
    bt_rec_read_spend(cj, c);
    cJSON_Delete(h);
    struct route_scan rs = {.rp = rp, .err = err, .errlen = errlen};
    if (!hs.routes || !bt_rec_scan_array(hs.routes, hdr_route, &rs)) {
        snprintf(err, errlen, "%s:1: recording header has no routes array", rp->path);
        return false;
    }
    return !rs.failed && read_prices(rp, &hs, err, errlen);
}

static int ev_type(const char *s)
{
    for (size_t i = 0; s && i < BT_REC_NEVTYPES; i++)
        if (!strcmp(bt_rec_ev_names[i], s))
            return (int)i;
    return -1;
}

void bt_rec_load_events(struct bt_replay *rp, const cJSON *e)
{
    const cJSON *g;
    cJSON_ArrayForEach(g, e) {
        struct bt_event ev = {.route = -1};
        double v;
        int ty = ev_type(jstr(g, "type"));
        int64_t ri;
        if (ty < 0 || !jnum(g, "t", &v) || !bt_rec_time(v, &ev.t))
            continue;
        ev.type = (enum bt_event_type)ty;
        if (jnum(g, "route", &v) && v >= -1 && v < rp->cfg.nroutes &&
            bt_f2i(v, -1, rp->cfg.nroutes, &ri))
            ev.route = (int)ri;
        const char *src = jstr(g, "source");
        ev.source = src && !strcmp(src, "quotas") ? BT_SRC_QUOTAS
                    : src && !strcmp(src, "admission") ? BT_SRC_ADMISSION : BT_SRC_CLOUDWATCH;
        if (ev.type == BT_EV_QUOTA) {
            static const char *const qsrc[] = {"unknown", "service-quotas", "config", "default"};
            const char *kind = jstr(g, "kind");
            int k = -1;
            for (int i = 0; kind && i < BT_Q_COUNT; i++)
                if (!strcmp(kind, bt_quota_kind_name(i)))
                    k = i;
            int qs = name_index(qsrc, 4, jstr(g, "quota_source"));
            /* null: the quota is unknown, the text says why (written as null, never NaN) */
            bool unknown = cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(g, "value"));
            if (unknown)
                ev.value = NAN;
            if (k < 0 || qs < 0 || (!unknown && !jnum(g, "value", &ev.value)))
                continue;
            ev.quota_kind = (enum bt_quota_kind)k;
            ev.quota_source = (enum bt_quota_source)qs;
            int mb = bt_quota_match_by_name(jstr(g, "matched_by"));
            ev.matched_by = mb < 0 ? BT_QM_NONE : (enum bt_quota_match)mb;
            ev.adjustable = adjustable_of(g);
        }
        if (ev.type == BT_EV_SETTING) {
            int k = bt_setting_by_name(jstr(g, "setting"));
            if (k < 0)
                continue; /* a setting this reader does not know */
            ev.setting = (enum bt_setting)k;
            if (bt_setting_is_number(ev.setting) ? !jnum(g, "value", &ev.value)
                                                 : !jstr(g, "value"))
                continue;
            const char *str = ev.setting == BT_SET_BURNDOWN ? jstr(g, "burndown_source")
                                                            : jstr(g, "value");
            if (str)
                bt_strlcpy(ev.str, str, sizeof ev.str);
        }
        if (jstr(g, "code"))
            bt_strlcpy(ev.code, jstr(g, "code"), sizeof ev.code);
        if (jstr(g, "text"))
            bt_strlcpy(ev.text, jstr(g, "text"), sizeof ev.text);
        bt_model_event(&rp->store, rp->cfg.routes, &ev);
        if (ev.t > rp->last_event)
            rp->last_event = ev.t;
        if (ev.type == BT_EV_MARKER) {
            if (rp->nmarkers == rp->capmarkers) { /* geometric: 60,000 markers were 60,000 reallocs */
                rp->capmarkers = rp->capmarkers ? 2 * rp->capmarkers : 16;
                rp->markers = bt_xrealloc(rp->markers, rp->capmarkers * sizeof *rp->markers);
            }
            rp->markers[rp->nmarkers].t = ev.t;
            bt_strlcpy(rp->markers[rp->nmarkers].text, ev.text, sizeof rp->markers[0].text);
            rp->nmarkers++;
        }
    }
}

/* "k": [[index, "series identity"], ...] names the series later rows use. */
void bt_rec_load_series(struct bt_replay *rp, const cJSON *k)
{
    const cJSON *g;
    cJSON_ArrayForEach(g, k) {
        const cJSON *i = cJSON_GetArrayItem(g, 0), *id = cJSON_GetArrayItem(g, 1);
        int64_t ix;
        if (!cJSON_IsNumber(i) || !cJSON_IsString(id) ||
            !bt_f2i(i->valuedouble, 0, (1 << 20) - 1, &ix) || strlen(id->valuestring) >= BT_SERIES_ID)
            continue;
        size_t idx = (size_t)ix;
        if (idx >= rp->nseries) {
            rp->series = bt_xrealloc(rp->series, (idx + 1) * sizeof *rp->series);
            memset(rp->series + rp->nseries, 0, (idx + 1 - rp->nseries) * sizeof *rp->series);
            rp->nseries = idx + 1;
        }
        free(rp->series[idx]);
        rp->series[idx] = bt_xstrdup(id->valuestring);
    }
}

/* 2.1 "v": [[route, from, to, settled_to, asked, arrival, [signal, ...]], ...]: what
 * each good poll asked for (core/model.h coverage); a file without it replays with
 * coverage inferred. A record out of range is skipped. */
void bt_rec_load_coverage(struct bt_replay *rp, const cJSON *v, const int *sigmap)
{
    const cJSON *g;
    cJSON_ArrayForEach(g, v) {
        /* route, then five times, each through the one checked conversion */
        int64_t h[6];
        bool ok = cJSON_GetArraySize(g) >= 7;
        for (int i = 0; ok && i < 6; i++) {
            const cJSON *x = cJSON_GetArrayItem(g, i);
            ok = cJSON_IsNumber(x) && (i == 0 ? bt_f2i(x->valuedouble, 0, rp->cfg.nroutes - 1, &h[i])
                                              : bt_rec_time(x->valuedouble, &h[i]));
        }
        if (!ok || h[2] <= h[1] || h[2] - h[1] > 16 * 86400)
            continue;
        struct bt_coverage c = {.route = (int)h[0], .from = h[1], .to = h[2],
                                .settled_to = h[3], .asked = h[4]};
        const cJSON *sigs = cJSON_GetArrayItem(g, 6), *x;
        cJSON_ArrayForEach(x, sigs) {
            int64_t si;
            if (!cJSON_IsNumber(x) || !bt_f2i(x->valuedouble, 0, 255, &si))
                continue;
            int sig = sigmap[si];
            if (sig >= 0)
                c.signals |= BT_SIG_BIT(sig);
        }
        bt_store_cover(&rp->store, &c, h[5]);
        bt_rec_note_arrival(rp, h[5]);
    }
}

/* "c": [[route, series, arrival, t, [signal, value, ...]], ...]: counter
 * readings, rated by the store as they were live. */
void bt_rec_load_readings(struct bt_replay *rp, const cJSON *c, const int *sigmap)
{
    const cJSON *g;
    cJSON_ArrayForEach(g, c) {
        double h[4];
        bool ok = cJSON_GetArraySize(g) >= 5;
        for (int i = 0; ok && i < 4; i++) {
            const cJSON *x = cJSON_GetArrayItem(g, i);
            ok = cJSON_IsNumber(x) && isfinite(x->valuedouble);
            h[i] = ok ? x->valuedouble : 0;
        }
        int64_t route, series, arrival;
        if (!ok || !bt_f2i(h[0], 0, rp->cfg.nroutes - 1, &route) ||
            !bt_f2i(h[1], 0, (int64_t)rp->nseries - 1, &series) || !rp->series[series] ||
            !bt_rec_time(h[2], &arrival) || !bt_rec_time_ok(h[3]))
            continue;
        struct bt_reading rd = {.route = (int)route, .t = h[3]};
        bt_strlcpy(rd.series, rp->series[series], sizeof rd.series);
        const cJSON *pairs = cJSON_GetArrayItem(g, 4);
        if (!cJSON_IsArray(pairs))
            continue;
        for (const cJSON *sg = pairs->child; sg && sg->next; sg = sg->next->next) {
            const cJSON *v = sg->next;
            int64_t si;
            if (!cJSON_IsNumber(sg) || !cJSON_IsNumber(v) || !bt_f2i(sg->valuedouble, 0, 255, &si))
                continue;
            int sig = sigmap[si];
            if (sig < 0 || (!bt_signal_counter((enum bt_signal)sig) &&
                            !bt_signal_share_gauge((enum bt_signal)sig)))
                continue;
            rd.signal = (enum bt_signal)sig;
            rd.value = v->valuedouble;
            bt_store_reading(&rp->store, &rd, arrival);
            bt_rec_note_arrival(rp, arrival);
            rp->has_admission = true;
        }
    }
}
