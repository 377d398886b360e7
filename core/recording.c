#include "core/recording.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

/* ---- writing ---- */

struct bt_recorder {
    int fd;
    char path[512];
    struct bt_buf line;        /* samples of the line being built */
    struct bt_buf events;
    int nsamples, nevents;
    /* the group being built: samples of one route, minute and arrival */
    int g_route;
    int64_t g_minute, g_arrival;
    bool g_open;
    unsigned long lines, dropped;
    char error[256];
};

static cJSON *route_json(const struct bt_route *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddStringToObject(o, "model", r->model);
    cJSON_AddStringToObject(o, "region", r->region);
    if (r->profile[0])
        cJSON_AddStringToObject(o, "profile", r->profile);
    if (r->project[0])
        cJSON_AddStringToObject(o, "project", r->project);
    cJSON_AddStringToObject(o, "endpoint", bt_endpoint_name(r->endpoint));
    cJSON_AddStringToObject(o, "inference", bt_inference_name(r->inference));
    cJSON_AddStringToObject(o, "priority", r->priority == BT_PRIO_OFFLINE ? "offline" : "online");
    if (!isnan(r->max_tokens))
        cJSON_AddNumberToObject(o, "max_tokens", r->max_tokens);
    if (!isnan(r->concurrency_limit))
        cJSON_AddNumberToObject(o, "concurrency_limit", r->concurrency_limit);
    cJSON_AddNumberToObject(o, "burndown", r->burndown);
    cJSON_AddStringToObject(o, "burndown_source", r->burndown_source);
    if (r->quota_code[0])
        cJSON_AddStringToObject(o, "quota_code", r->quota_code);
    /* whether counters were configured, never the URL (it may carry credentials) */
    cJSON_AddBoolToObject(o, "admission", r->admission[0] != '\0');
    cJSON *q = cJSON_AddObjectToObject(o, "quotas");
    for (int k = 0; k < BT_Q_COUNT; k++) {
        const struct bt_quota *qq = &r->quota[k];
        if (isnan(qq->value))
            continue;
        cJSON *x = cJSON_AddObjectToObject(q, bt_quota_kind_name(k));
        cJSON_AddNumberToObject(x, "value", qq->value);
        cJSON_AddStringToObject(x, "source", bt_quota_source_name(qq->source));
        if (qq->code[0])
            cJSON_AddStringToObject(x, "code", qq->code);
        if (qq->name[0])
            cJSON_AddStringToObject(x, "name", qq->name);
    }
    return o;
}

static void threshold_str(const struct bt_threshold *t, char *out, size_t n)
{
    snprintf(out, n, "%g%s", t->value, t->pct ? "%" : "");
}

static char *header_json(const struct bt_config *cfg, const char *mode, int64_t now)
{
    cJSON *h = cJSON_CreateObject();
    char iso[32], buf[32];
    cJSON_AddStringToObject(h, "format", BT_REC_FORMAT);
    snprintf(buf, sizeof buf, "%d.%d", BT_REC_MAJOR, BT_REC_MINOR);
    cJSON_AddStringToObject(h, "version", buf);
    bt_fmt_iso(now, iso, sizeof iso);
    cJSON_AddStringToObject(h, "created", iso);
    cJSON_AddStringToObject(h, "created_by", "bedtop " BEDTOP_VERSION);
    cJSON_AddStringToObject(h, "mode", mode);
    cJSON *sig = cJSON_AddArrayToObject(h, "signals");
    for (int i = 0; i < BT_SIG_COUNT; i++)
        cJSON_AddItemToArray(sig, cJSON_CreateString(bt_signal_info[i].name));
    cJSON *c = cJSON_AddObjectToObject(h, "config");
    cJSON_AddNumberToObject(c, "interval", cfg->interval);
    cJSON_AddNumberToObject(c, "cloudwatch_lag", cfg->cw_lag);
    threshold_str(&cfg->warn, buf, sizeof buf);
    cJSON_AddStringToObject(c, "warn_headroom", buf);
    threshold_str(&cfg->crit, buf, sizeof buf);
    cJSON_AddStringToObject(c, "crit_headroom", buf);
    cJSON_AddNumberToObject(c, "daily_warn", cfg->daily_warn_pct);
    cJSON_AddNumberToObject(c, "daily_crit", cfg->daily_crit_pct);
    cJSON_AddNumberToObject(c, "oversize_factor", cfg->oversize_factor);
    cJSON_AddNumberToObject(c, "oversize_margin", cfg->oversize_margin);
    cJSON_AddNumberToObject(c, "retry_share", cfg->retry_share);
    cJSON_AddBoolToObject(c, "cache_read_reserved", cfg->cache_read_reserved);
    cJSON_AddNumberToObject(c, "history_minutes", cfg->history_minutes);
    cJSON *routes = cJSON_AddArrayToObject(h, "routes");
    for (int i = 0; i < cfg->nroutes; i++)
        cJSON_AddItemToArray(routes, route_json(&cfg->routes[i]));
    char *s = cJSON_PrintUnformatted(h);
    cJSON_Delete(h);
    return s;
}

static bool write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

struct bt_recorder *bt_recorder_open(const char *path, const struct bt_config *cfg,
                                     const char *mode, int64_t now, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
                 errno == EEXIST ? " (recordings are never overwritten: choose a new name)" : "");
        return NULL;
    }
    struct bt_recorder *r = bt_xcalloc(1, sizeof *r);
    r->fd = fd;
    bt_strlcpy(r->path, path, sizeof r->path);
    char *h = header_json(cfg, mode, now);
    bool ok = write_all(fd, h, strlen(h)) && write_all(fd, "\n", 1);
    cJSON_free(h);
    if (!ok) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        unlink(path);
        free(r);
        return NULL;
    }
    return r;
}

static void close_group(struct bt_recorder *r)
{
    if (r->g_open)
        bt_buf_puts(&r->line, "]]");
    r->g_open = false;
}

static void on_sample(void *arg, const struct bt_sample *smp, int64_t arrival)
{
    struct bt_recorder *r = arg;
    int64_t minute = bt_minute_floor(smp->t);
    if (!r->g_open || r->g_route != smp->route || r->g_minute != minute ||
        r->g_arrival != arrival) {
        close_group(r);
        bt_buf_printf(&r->line, "%s[%d,%lld,%lld,[", r->nsamples ? "," : "", smp->route,
                      (long long)minute, (long long)arrival);
        r->g_open = true;
        r->g_route = smp->route;
        r->g_minute = minute;
        r->g_arrival = arrival;
    } else {
        bt_buf_putc(&r->line, ',');
    }
    /* floats keep 9 significant digits: the store holds floats, so this round-trips */
    bt_buf_printf(&r->line, "%d,%.9g", (int)smp->signal, smp->value);
    r->nsamples++;
}

static const char *const ev_names[] = {"error", "ok", "quota", "marker", "info"};

static void on_event(void *arg, const struct bt_event *ev)
{
    struct bt_recorder *r = arg;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "t", (double)ev->t);
    cJSON_AddStringToObject(o, "type", ev_names[ev->type]);
    cJSON_AddNumberToObject(o, "route", ev->route);
    cJSON_AddStringToObject(o, "source", bt_source_name(ev->source));
    if (ev->type == BT_EV_QUOTA) {
        cJSON_AddStringToObject(o, "kind", bt_quota_kind_name(ev->quota_kind));
        cJSON_AddNumberToObject(o, "value", ev->value);
        cJSON_AddStringToObject(o, "quota_source", bt_quota_source_name(ev->quota_source));
    }
    if (ev->code[0])
        cJSON_AddStringToObject(o, "code", ev->code);
    if (ev->text[0])
        cJSON_AddStringToObject(o, "text", ev->text);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (r->nevents++)
        bt_buf_putc(&r->events, ',');
    bt_buf_puts(&r->events, s);
    cJSON_free(s);
}

void bt_recorder_add_sample(struct bt_recorder *r, const struct bt_sample *smp, int64_t arrival)
{
    on_sample(r, smp, arrival);
}

void bt_recorder_add_event(struct bt_recorder *r, const struct bt_event *ev)
{
    on_event(r, ev);
}

void bt_recorder_attach(struct bt_recorder *r, struct bt_store *s)
{
    s->tap = (struct bt_store_tap){.sample = on_sample, .event = on_event, .arg = r};
}

int bt_recorder_flush(struct bt_recorder *r, int64_t t)
{
    if (!r->nsamples && !r->nevents)
        return 0;
    close_group(r);
    struct bt_buf out = {0};
    bt_buf_printf(&out, "{\"t\":%lld,\"s\":[%s],\"e\":[%s]}\n", (long long)t,
                  bt_buf_str(&r->line), bt_buf_str(&r->events));
    bt_buf_reset(&r->line);
    bt_buf_reset(&r->events);
    r->nsamples = r->nevents = 0;
    bool ok = write_all(r->fd, out.buf, out.len);
    bt_buf_free(&out);
    if (!ok) {
        /* Disk full or similar: say so once, drop this line, keep watching. The
         * file may now end in a partial line; the reader skips it. */
        if (!r->error[0])
            snprintf(r->error, sizeof r->error, "recording %s: %s (lines are being dropped)",
                     r->path, strerror(errno));
        r->dropped++;
        return -1;
    }
    r->error[0] = '\0';
    r->lines++;
    return 0;
}

void bt_recorder_marker(struct bt_recorder *r, struct bt_store *s, int64_t t, const char *note)
{
    struct bt_event ev = {.t = t, .type = BT_EV_MARKER, .route = -1};
    bt_strlcpy(ev.text, note, sizeof ev.text);
    if (s)
        bt_store_event(s, &ev);
    else if (r)
        on_event(r, &ev);
    if (r)
        bt_recorder_flush(r, t);
}

const char *bt_recorder_error(const struct bt_recorder *r)
{
    return r && r->error[0] ? r->error : NULL;
}

unsigned long bt_recorder_lines(const struct bt_recorder *r)
{
    return r->lines;
}

unsigned long bt_recorder_dropped(const struct bt_recorder *r)
{
    return r->dropped;
}

const char *bt_recorder_path(const struct bt_recorder *r)
{
    return r->path;
}

void bt_recorder_close(struct bt_recorder *r)
{
    if (!r)
        return;
    bt_recorder_flush(r, 0);
    close(r->fd);
    bt_buf_free(&r->line);
    bt_buf_free(&r->events);
    free(r);
}

/* ---- reading ---- */

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

/* Times in a file become int64_t: converting an infinite or huge double is
 * undefined behaviour (fuzzing found 1e999 here), so bound them first. */
static bool time_ok(double t)
{
    return isfinite(t) && fabs(t) < 1e15;
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
    static const char *const infs[] = {"on-demand", "cross-region", "global"};
    static const char *const qsrc[] = {"unknown", "service-quotas", "config", "default"};
    const char *name = jstr(o, "name"), *model = jstr(o, "model");
    if (!name || !model || !*name) {
        snprintf(why, n, "route without name or model");
        return false;
    }
    bt_route_defaults(r);
    bt_strlcpy(r->name, name, sizeof r->name);
    bt_strlcpy(r->model, model, sizeof r->model);
    if (jstr(o, "region"))
        bt_strlcpy(r->region, jstr(o, "region"), sizeof r->region);
    if (jstr(o, "profile"))
        bt_strlcpy(r->profile, jstr(o, "profile"), sizeof r->profile);
    if (jstr(o, "project"))
        bt_strlcpy(r->project, jstr(o, "project"), sizeof r->project);
    int e = name_index(eps, 2, jstr(o, "endpoint"));
    r->endpoint = e == 1 ? BT_EP_MANTLE : BT_EP_RUNTIME;
    int inf = name_index(infs, 3, jstr(o, "inference"));
    r->inference = inf < 0 ? bt_inference_from_model(r->model) : (enum bt_inference)inf;
    r->inference_set = true;
    const char *prio = jstr(o, "priority");
    r->priority = prio && !strcmp(prio, "offline") ? BT_PRIO_OFFLINE : BT_PRIO_ONLINE;
    jnum(o, "max_tokens", &r->max_tokens);
    jnum(o, "concurrency_limit", &r->concurrency_limit);
    if (!jnum(o, "burndown", &r->burndown) || r->burndown < 1)
        r->burndown = 1;
    const char *bs = jstr(o, "burndown_source");
    r->burndown_source = bs && !strcmp(bs, "config") ? "config" : bs && !strcmp(bs, "table") ? "table" : "default";
    if (jstr(o, "quota_code"))
        bt_strlcpy(r->quota_code, jstr(o, "quota_code"), sizeof r->quota_code);
    const cJSON *adm = cJSON_GetObjectItemCaseSensitive(o, "admission");
    if (cJSON_IsTrue(adm))
        bt_strlcpy(r->admission, "(recorded)", sizeof r->admission);
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(o, "quotas");
    for (int k = 0; k < BT_Q_COUNT; k++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(q, bt_quota_kind_name(k));
        double v;
        if (!x || !jnum(x, "value", &v))
            continue;
        r->quota[k].value = v;
        int s = name_index(qsrc, 4, jstr(x, "source"));
        r->quota[k].source = s < 0 ? BT_QS_UNKNOWN : (enum bt_quota_source)s;
        if (jstr(x, "code"))
            bt_strlcpy(r->quota[k].code, jstr(x, "code"), sizeof r->quota[k].code);
        if (jstr(x, "name"))
            bt_strlcpy(r->quota[k].name, jstr(x, "name"), sizeof r->quota[k].name);
    }
    return true;
}

static bool parse_header(struct bt_replay *rp, const char *line, int *sigmap, char *err,
                         size_t errlen)
{
    cJSON *h = cJSON_Parse(line);
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
    int ns = cJSON_GetArraySize(sigs);
    for (int i = 0; i < 256; i++)
        sigmap[i] = -1;
    for (int i = 0; i < ns && i < 256; i++) {
        const cJSON *v = cJSON_GetArrayItem(sigs, i);
        sigmap[i] = cJSON_IsString(v) ? bt_signal_by_name(v->valuestring) : -1;
    }
    struct bt_config *c = &rp->cfg;
    const cJSON *cj = cJSON_GetObjectItemCaseSensitive(h, "config");
    double d;
    if (jnum(cj, "interval", &d) && d >= 1)
        c->interval = d;
    if (jnum(cj, "cloudwatch_lag", &d) && d >= 0)
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
    c->cache_read_reserved = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cj, "cache_read_reserved"));
    const cJSON *routes = cJSON_GetObjectItemCaseSensitive(h, "routes");
    int nr = cJSON_GetArraySize(routes);
    if (!cJSON_IsArray(routes) || nr > 100000) {
        snprintf(err, errlen, "%s:1: recording header has no routes array", rp->path);
        cJSON_Delete(h);
        return false;
    }
    for (int i = 0; i < nr; i++) {
        char why[128];
        struct bt_route r;
        if (!parse_route(cJSON_GetArrayItem(routes, i), &r, why, sizeof why)) {
            snprintf(err, errlen, "%s:1: route %d: %s", rp->path, i + 1, why);
            cJSON_Delete(h);
            return false;
        }
        int k = bt_config_add_route(c, r.name);
        c->routes[k] = r;
    }
    cJSON_Delete(h);
    return true;
}

static int ev_type(const char *s)
{
    for (size_t i = 0; s && i < BT_ARRAY_LEN(ev_names); i++)
        if (!strcmp(ev_names[i], s))
            return (int)i;
    return -1;
}

/* One poll line into the store. Returns false (with why) for a corrupt line. */
static bool load_line(struct bt_replay *rp, const char *line, const int *sigmap, int64_t *t_out,
                      char *why, size_t n)
{
    cJSON *o = cJSON_Parse(line);
    double t;
    if (!o || !jnum(o, "t", &t) || !time_ok(t)) {
        snprintf(why, n, o ? "no poll time \"t\"" : "not valid JSON");
        cJSON_Delete(o);
        return false;
    }
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "s");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "e");
    if ((s && !cJSON_IsArray(s)) || (e && !cJSON_IsArray(e))) {
        snprintf(why, n, "\"s\" and \"e\" must be arrays");
        cJSON_Delete(o);
        return false;
    }
    /* validate before touching the store, so a corrupt line adds nothing */
    const cJSON *g;
    cJSON_ArrayForEach(g, s) {
        const cJSON *r = cJSON_GetArrayItem(g, 0), *m = cJSON_GetArrayItem(g, 1),
                    *a = cJSON_GetArrayItem(g, 2), *kv = cJSON_GetArrayItem(g, 3);
        if (!cJSON_IsNumber(r) || !cJSON_IsNumber(m) || !cJSON_IsNumber(a) || !cJSON_IsArray(kv) ||
            !time_ok(m->valuedouble) || !time_ok(a->valuedouble) ||
            r->valueint < 0 || r->valueint >= rp->cfg.nroutes || cJSON_GetArraySize(kv) % 2) {
            snprintf(why, n, "bad sample group (want [route, minute, arrival, [signal, value, ...]])");
            cJSON_Delete(o);
            return false;
        }
    }
    cJSON_ArrayForEach(g, s) {
        int r = cJSON_GetArrayItem(g, 0)->valueint;
        int64_t m = (int64_t)cJSON_GetArrayItem(g, 1)->valuedouble;
        int64_t a = (int64_t)cJSON_GetArrayItem(g, 2)->valuedouble;
        const cJSON *kv = cJSON_GetArrayItem(g, 3);
        int cnt = cJSON_GetArraySize(kv);
        const cJSON *it = kv->child;
        for (int i = 0; i + 1 < cnt && it && it->next; i += 2, it = it->next->next) {
            int k = cJSON_IsNumber(it) && it->valueint >= 0 && it->valueint < 256 ? sigmap[it->valueint] : -1;
            if (k < 0 || !cJSON_IsNumber(it->next))
                continue;
            struct bt_sample smp = {.t = m, .route = r, .signal = (enum bt_signal)k,
                                    .value = it->next->valuedouble};
            bt_store_add(&rp->store, &smp, a);
            if (bt_signal_info[k].source == BT_SRC_ADMISSION)
                rp->has_admission = true;
        }
    }
    cJSON_ArrayForEach(g, e) {
        struct bt_event ev = {.route = -1};
        double v;
        int ty = ev_type(jstr(g, "type"));
        if (ty < 0 || !jnum(g, "t", &v) || !time_ok(v))
            continue;
        ev.type = (enum bt_event_type)ty;
        ev.t = (int64_t)v;
        if (jnum(g, "route", &v) && v >= -1 && v < rp->cfg.nroutes)
            ev.route = (int)v;
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
            if (k < 0 || qs < 0 || !jnum(g, "value", &ev.value))
                continue;
            ev.quota_kind = (enum bt_quota_kind)k;
            ev.quota_source = (enum bt_quota_source)qs;
        }
        if (jstr(g, "code"))
            bt_strlcpy(ev.code, jstr(g, "code"), sizeof ev.code);
        if (jstr(g, "text"))
            bt_strlcpy(ev.text, jstr(g, "text"), sizeof ev.text);
        bt_model_event(&rp->store, rp->cfg.routes, &ev);
        if (ev.type == BT_EV_MARKER) {
            rp->markers = bt_xrealloc(rp->markers, (rp->nmarkers + 1) * sizeof *rp->markers);
            rp->markers[rp->nmarkers].t = ev.t;
            bt_strlcpy(rp->markers[rp->nmarkers].text, ev.text, sizeof rp->markers[0].text);
            rp->nmarkers++;
        }
    }
    cJSON_Delete(o);
    *t_out = (int64_t)t;
    return true;
}

/* The one reader behind bt_replay_open and bt_replay_open_mem: takes text
 * (NUL-terminated, len bytes, malloc'd) and frees it. */
static bool replay_open_text(struct bt_replay *rp, const char *path, char *text, size_t len,
                             void (*warn)(void *, const char *), void *warn_arg, char *err,
                             size_t errlen)
{
    /* memchr, not strchr: a NUL byte before the first newline must not hide it */
    char *nl = len ? memchr(text, '\n', len) : NULL;
    if (!nl) {
        snprintf(err, errlen, "%s: empty recording (no complete header line)", path);
        free(text);
        bt_config_free(&rp->cfg);
        return false;
    }
    int sigmap[256];
    *nl = '\0';
    if (!parse_header(rp, text, sigmap, err, errlen)) {
        free(text);
        bt_config_free(&rp->cfg);
        return false;
    }
    rp->base = bt_xcalloc((size_t)(rp->cfg.nroutes ? rp->cfg.nroutes : 1), sizeof *rp->base);
    memcpy(rp->base, rp->cfg.routes, (size_t)rp->cfg.nroutes * sizeof *rp->base);
    bt_burndown_free(&rp->cfg.burndown);
    bt_burndown_add(&rp->cfg.burndown, "*", 1); /* burndown comes from the header */

    /* First pass: poll times, to size the store to the whole recording. */
    int64_t first = 0, last = 0;
    for (char *p = nl + 1; *p;) {
        char *e = strchr(p, '\n');
        if (!e)
            break;
        double t;
        if (sscanf(p, "{\"t\":%lf", &t) == 1 && time_ok(t)) {
            if (!first || t < first)
                first = (int64_t)t;
            if (t > last)
                last = (int64_t)t;
        }
        p = e + 1;
    }
    /* history: the day before the first poll (demo and backfill prefill) to the last */
    int64_t span_min = first ? (last - first) / 60 + 1 + 1440 + 60 : 1440;
    if (span_min > 16 * 1440)
        span_min = 16 * 1440;
    rp->cfg.history_minutes = (int)span_min;
    bt_store_init(&rp->store, rp->cfg.nroutes, (int)span_min);
    bt_store_track_arrival(&rp->store);

    int lineno = 1;
    size_t cap = 0;
    for (char *p = nl + 1; *p;) {
        lineno++;
        char *e = strchr(p, '\n');
        char why[160];
        bool truncated = !e;
        if (e)
            *e = '\0';
        int64_t t;
        bool blank = !*p;
        if (!blank && !truncated && load_line(rp, p, sigmap, &t, why, sizeof why)) {
            if (rp->npolls == cap) {
                cap = cap ? cap * 2 : 1024;
                rp->polls = bt_xrealloc(rp->polls, cap * sizeof *rp->polls);
            }
            rp->polls[rp->npolls++] = t;
        } else if (!blank) {
            char msg[300];
            snprintf(msg, sizeof msg, "%s:%d: %s; line skipped", path, lineno,
                     truncated ? "truncated last line (recording interrupted?)" : why);
            if (!rp->skipped)
                bt_strlcpy(rp->first_problem, msg, sizeof rp->first_problem);
            rp->skipped++;
            if (warn)
                warn(warn_arg, msg);
        }
        if (truncated)
            break;
        p = e + 1;
    }
    free(text);
    /* polls are written in order; sort defensively for binary search */
    for (size_t i = 1; i < rp->npolls; i++) {
        int64_t v = rp->polls[i];
        size_t j = i;
        while (j > 0 && rp->polls[j - 1] > v) {
            rp->polls[j] = rp->polls[j - 1];
            j--;
        }
        rp->polls[j] = v;
    }
    if (!rp->start || (rp->npolls && rp->polls[0] < rp->start))
        rp->start = rp->npolls ? rp->polls[0] : 0;
    rp->end = rp->npolls ? rp->polls[rp->npolls - 1] : 0;
    rp->store.tap = (struct bt_store_tap){0};
    bt_replay_seek(rp, rp->end);
    return true;
}

bool bt_replay_open(struct bt_replay *rp, const char *path, void (*warn)(void *, const char *),
                    void *warn_arg, char *err, size_t errlen)
{
    memset(rp, 0, sizeof *rp);
    bt_strlcpy(rp->path, path, sizeof rp->path);
    bt_strlcpy(rp->mode, "live", sizeof rp->mode);
    bt_config_defaults(&rp->cfg);
    size_t len;
    char *text = bt_read_file(path, (size_t)4 << 30, &len);
    if (!text) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        bt_config_free(&rp->cfg);
        return false;
    }
    return replay_open_text(rp, path, text, len, warn, warn_arg, err, errlen);
}

bool bt_replay_open_mem(struct bt_replay *rp, const char *name, const char *data, size_t len,
                        void (*warn)(void *, const char *), void *warn_arg, char *err,
                        size_t errlen)
{
    memset(rp, 0, sizeof *rp);
    bt_strlcpy(rp->path, name, sizeof rp->path);
    bt_strlcpy(rp->mode, "live", sizeof rp->mode);
    bt_config_defaults(&rp->cfg);
    /* a private terminated copy, as bt_read_file gives: the reader edits it in place */
    char *text = bt_xmalloc(len + 1);
    if (len)
        memcpy(text, data, len);
    text[len] = '\0';
    return replay_open_text(rp, name, text, len, warn, warn_arg, err, errlen);
}

void bt_replay_seek(struct bt_replay *rp, int64_t t)
{
    if (t < rp->start)
        t = rp->start;
    if (t > rp->end)
        t = rp->end;
    bt_store_set_horizon(&rp->store, rp->cfg.routes, rp->base, t ? t : 1);
}

size_t bt_replay_poll_at(const struct bt_replay *rp, int64_t t)
{
    size_t lo = 0, hi = rp->npolls;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (rp->polls[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : 0;
}

void bt_replay_free(struct bt_replay *rp)
{
    bt_store_free(&rp->store);
    bt_config_free(&rp->cfg);
    free(rp->base);
    free(rp->polls);
    free(rp->markers);
    memset(rp, 0, sizeof *rp);
}

bool bt_parse_when(const char *s, int64_t start, int64_t end, int64_t rel, int64_t *out)
{
    double d;
    if ((s[0] == '-' || s[0] == '+') && bt_parse_duration(s + 1, &d)) {
        *out = rel + (s[0] == '-' ? -(int64_t)d : (int64_t)d);
        return true;
    }
    int hh, mm, ss = 0, used = 0;
    if ((sscanf(s, "%2d:%2d:%2d%n", &hh, &mm, &ss, &used) == 3 ||
         sscanf(s, "%2d:%2d%n", &hh, &mm, &used) == 2) &&
        !s[used] && hh < 24 && mm < 60 && ss < 60) {
        /* the time of day on the day nearest the reference that falls in range */
        int64_t ref = rel ? rel : start;
        int64_t day = ref - (ref % 86400);
        int64_t best = 0;
        bool best_in = false;
        for (int k = -1; k <= 1; k++) {
            int64_t c = day + k * 86400 + hh * 3600 + mm * 60 + ss;
            bool in = (!start || c >= start - 60) && (!end || c <= end + 60);
            bool closer = !best || llabs(c - ref) < llabs(best - ref);
            if ((in && (!best_in || closer)) || (!in && !best_in && closer)) {
                best = c;
                best_in = in;
            }
        }
        *out = best;
        return true;
    }
    int64_t t;
    if (bt_parse_iso(s, &t)) {
        *out = t;
        return true;
    }
    long v;
    if (bt_parse_long(s, 1000000000L, 9999999999L, &v)) {
        *out = v;
        return true;
    }
    (void)end;
    return false;
}
